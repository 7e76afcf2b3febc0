/* The one linear solver (common/linalg.h): Cholesky on a positive definite
 * system, an error on a singular one, and the minimum-norm solution of a
 * singular one where the caller allows it (the overlap solo table's groups
 * that no experiment covers, which its former Gaussian elimination left at
 * weight 0). */
#include "common/common.h"
#include "common/linalg.h"
#include "testhelp.h"

#include <string.h>

static void test_spd(void)
{
    /* [4 2; 2 3] w = [10; 8] -> w = [1.75, 1.5] */
    double a[4] = {4, 2, 2, 3}, b[2] = {10, 8};
    CHECK_OK(psi_solve_sym(a, b, 2, 0, "test"));
    CHECK_NEAR(b[0], 1.75, 1e-12);
    CHECK_NEAR(b[1], 1.5, 1e-12);
}

static void test_singular_refused(void)
{
    double a[4] = {1, 1, 1, 1}, b[2] = {2, 2};
    CHECK(psi_solve_sym(a, b, 2, 0, "rule") == PS_E_INPUT);
    CHECK_MSG(strcmp(ps_last_error(), "rule: the system of 2 unknowns is singular") == 0, "%s", ps_last_error());
}

static void test_singular_min_norm(void)
{
    /* An unknown that no row touches (its row and column 0) gets 0, the
     * others their solution, as the Gaussian elimination gave. */
    double a[9] = {2, 0, 1, 0, 0, 0, 1, 0, 2}, b[3] = {3, 0, 3};
    CHECK_OK(psi_solve_sym(a, b, 3, 1, "solo table"));
    CHECK_NEAR(b[0], 1, 1e-12);
    CHECK_NEAR(b[1], 0, 1e-12);
    CHECK_NEAR(b[2], 1, 1e-12);
    /* Two identical columns: the minimum-norm split is even. */
    double c[4] = {1, 1, 1, 1}, d[2] = {2, 2};
    CHECK_OK(psi_solve_sym(c, d, 2, 1, "solo table"));
    CHECK_NEAR(d[0], 1, 1e-12);
    CHECK_NEAR(d[1], 1, 1e-12);
}

TH_MAIN(TEST(test_spd), TEST(test_singular_refused), TEST(test_singular_min_norm))
