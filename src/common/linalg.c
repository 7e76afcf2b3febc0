/* The LAPACK solver of linalg.h. */
#include "common/linalg.h"

#include "common/common.h"

#include <stdlib.h>
#include <string.h>

/* LAPACK from OpenBLAS (gfortran calling convention: the hidden length of a
 * character argument comes last). */
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
                   const int *ldb, int *info, size_t uplo_len);
extern void dgelsd_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
                    double *s, const double *rcond, int *rank, double *work, const int *lwork, int *iwork, int *info);

/* Minimum-norm least squares of a w = b (a is symmetric, so its row-major
 * copy is its column-major one); b is overwritten with w. */
static int min_norm(double *a, double *b, int m, const char *what)
{
    int n = m, nrhs = 1, rank = 0, info = 0, lwork = -1, iwork_q = 0;
    double rcond = 1e-12, wq = 0;
    double *s = psi_malloc((size_t)m * sizeof *s), *work = NULL;
    int *iwork = NULL;
    if (s)
        dgelsd_(&n, &n, &nrhs, a, &n, b, &n, s, &rcond, &rank, &wq, &lwork, &iwork_q, &info);
    lwork = info == 0 && wq > 0 ? (int)wq : 1;
    if (s) {
        work = psi_malloc((size_t)lwork * sizeof *work);
        iwork = psi_malloc((size_t)(iwork_q > 0 ? iwork_q : 1) * sizeof *iwork);
    }
    int rc = s && work && iwork ? PS_OK : PS_E_NOMEM;
    if (rc == PS_OK) {
        dgelsd_(&n, &n, &nrhs, a, &n, b, &n, s, &rcond, &rank, work, &lwork, iwork, &info);
        if (info != 0)
            rc = psi_error(PS_E_BACKEND, "%s: least squares did not converge (LAPACK dgelsd info %d)", what, info);
    }
    free(s);
    free(work);
    free(iwork);
    return rc;
}

int psi_solve_sym(double *a, double *b, int m, int singular_ok, const char *what)
{
    if (m <= 0)
        return PS_OK;
    size_t mm = (size_t)m * m;
    double *a0 = NULL, *b0 = NULL;
    if (singular_ok) {
        a0 = psi_malloc(mm * sizeof *a0);
        b0 = psi_malloc((size_t)m * sizeof *b0);
        if (!a0 || !b0) {
            free(a0);
            free(b0);
            return PS_E_NOMEM;
        }
        memcpy(a0, a, mm * sizeof *a0);
        memcpy(b0, b, (size_t)m * sizeof *b0);
    }
    int n = m, nrhs = 1, info = 0, rc = PS_OK;
    dposv_("L", &n, &nrhs, a, &n, b, &n, &info, 1);
    if (info > 0 && singular_ok) {
        memcpy(b, b0, (size_t)m * sizeof *b);
        rc = min_norm(a0, b, m, what);
    } else if (info > 0) {
        rc = psi_error(PS_E_INPUT, "%s: the system of %d unknowns is singular", what, m);
    } else if (info < 0) {
        rc = psi_error(PS_E_BACKEND, "%s: LAPACK dposv refused argument %d", what, -info);
    }
    free(a0);
    free(b0);
    return rc;
}
