/*
 * A streaming RFC 4180 tokenizer. It reads the file through one fixed buffer
 * and keeps only the current record, so a file of any size is never held in
 * memory, and it knows the line and column of every field for messages of the
 * form "file:line:column: ...". A column is the 1-based field number.
 *
 * Accepted beyond RFC 4180: a UTF-8 byte order mark, LF or CRLF (or lone CR)
 * line ends, blank lines (skipped), lines starting with '#' before the first
 * record (comments), and lines starting with a chosen prefix anywhere (for
 * the "==PROF==" lines of Nsight Compute).
 */
#ifndef PS_PROFILE_CSV_H
#define PS_PROFILE_CSV_H

#include <stddef.h>
#include <stdio.h>

typedef struct ps_csv psi_csv_t; /* ps_csv_t of pairsight_core.h */

/* Open a file (name is used in messages). */
int psi_csv_open(const char *path, psi_csv_t **out);
/* Tokenize a stream read once, in CSV_BUF pieces (a pipe: memory does not
 * grow with its length); f is the tokenizer's, closed by psi_csv_close (or
 * here on failure). */
int psi_csv_open_stream(FILE *f, const char *name, psi_csv_t **out);
/* Tokenize a caller-owned buffer, which must outlive the tokenizer; name is
 * used in messages. */
int psi_csv_open_mem(const void *data, size_t len, const char *name, psi_csv_t **out);
void psi_csv_close(psi_csv_t *c);

/* Lines starting with prefix (no ',', '"', CR or LF in it) are skipped
 * wherever a record could start. The string must outlive the tokenizer. */
void psi_csv_skip_prefix(psi_csv_t *c, const char *prefix);

/* Line numbers count LF (and CRLF) only, as a text editor does: a bare CR
 * (a progress bar's) still ends a record but starts no new line. */
void psi_csv_lf_lines(psi_csv_t *c);

/* The next byte (0..255) without taking it, -1 at end of file, or PS_E_IO. */
int psi_csv_peek_byte(psi_csv_t *c);
/* Read the rest of the current line as plain text (no quoting) into field
 * 0; returns 1, 0 at end of file, or a negative PS_E_* code. For files that
 * mix CSV with other text. At most 4 MiB of a line are kept. */
int psi_csv_next_line(psi_csv_t *c);

/* Read the next record: returns 1 with a record, 0 at end of file, or a
 * negative PS_E_* code with ps_last_error() set ("file:line:column: ..."). */
int psi_csv_next(psi_csv_t *c);

int psi_csv_nfields(const psi_csv_t *c);
/* Field i (0-based) of the current record, NUL-terminated; valid until the
 * next psi_csv_next. A NUL byte in the text is an error, so none is inside. */
const char *psi_csv_field(const psi_csv_t *c, int i);
size_t psi_csv_field_len(const psi_csv_t *c, int i);
/* Index of the first field of the current record equal to name, or -1 (for
 * finding a column in a header). */
int psi_csv_find(const psi_csv_t *c, const char *name);
/* Line on which field i starts, and the line of the record's first field. */
size_t psi_csv_field_line(const psi_csv_t *c, int i);

/* The one header matcher of the CSV readers (tables, queries): the current
 * record (the header) against a column schema of n names. idx[k] is the
 * field (0-based) named names[k], -1 when absent; fields of other names are
 * ignored. A schema column named twice is PS_E_INPUT
 * "FILE:LINE:COL: duplicate column 'X' (first at column N)". *missing is the
 * first absent k whose optional[k] is 0 (optional NULL: none optional), -1
 * when none; what an absent column means is the caller's to say (see
 * psi_csv_missing). */
int psi_csv_match_header(const psi_csv_t *c, const char *const *names, const int *optional, size_t n, int *idx,
                         int *missing);

/* "" or, for a header of one column that holds ';' or tabs, a note that the
 * separator must be ',' (appended to the errors of a missing column). */
const char *psi_csv_separator_hint(const psi_csv_t *c);
/* PS_E_INPUT "FILE:LINE:1: missing required column 'NAME' of WHAT", LINE
 * the header's. */
int psi_csv_missing(const psi_csv_t *c, const char *name, const char *what);
size_t psi_csv_line(const psi_csv_t *c);
const char *psi_csv_path(const psi_csv_t *c);

/* Write s as one field, quoted (RFC 4180) only where it holds ',', '"', CR
 * or LF; NULL writes an empty field. */
void psi_csv_put_field(FILE *f, const char *s);

#endif
