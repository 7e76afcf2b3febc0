/* The one linear solver of the library: LAPACK through OpenBLAS, for the
 * symmetric normal equations (X'X + ridge) w = X'y of every least-squares fit
 * (the co-location KACE regression, the overlap solo table, the baselines'
 * linear rules and ridge regression). */
#ifndef PS_COMMON_LINALG_H
#define PS_COMMON_LINALG_H

/* Solve a w = b for a symmetric a (m x m, either storage order: only its
 * lower triangle is read) by Cholesky (LAPACK dposv); the solution
 * overwrites b, a is destroyed.
 * Without singular_ok a matrix that is not positive definite is an error
 * (PS_E_INPUT "WHAT: the system of M unknowns is singular"). With it, such a
 * system (a group of columns that no row touches, a ridge of 0) gets the
 * minimum-norm least-squares solution instead (LAPACK dgelsd, rcond 1e-12):
 * the directions a leaves undetermined get weight 0. */
int psi_solve_sym(double *a, double *b, int m, int singular_ok, const char *what);

#endif
