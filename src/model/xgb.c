/* The one error helper of every XGBoost call (model.h): the model's trainer
 * and predictor, the forest loader and the co-location learners. */
#include "model/model.h"

#include "common/common.h"

#include <string.h>
#include <xgboost/c_api.h>

/* XGBoost reports a failed C++ allocation as its exception's text. */
int psi_xgb_error(const char *what)
{
    const char *e = XGBGetLastError();
    int oom = strstr(e, "bad_alloc") || strstr(e, "bad_array_new_length");
    return psi_error(oom ? PS_E_NOMEM : PS_E_BACKEND, "XGBoost: %s: %s", what, oom ? "out of memory" : e);
}
