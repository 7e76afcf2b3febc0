/* Host side of the CUDA module (module.h): find libpairsight_cuda.so, load it
 * once, check that it was built with this host, and open the backend. */
#include "collect/module.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static psi_cuda_module_open_fn module_open; /* set once, under module_lock */
static char module_path[PATH_MAX];

/* Directory of the running executable, without the trailing '/'. */
static int exe_dir(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* dlopen path. 0 and *handle set when it loaded; 1 when there is no such
 * file; -1 when it is there but did not load (why, in why). */
static int try_load(const char *path, void **handle, char *why, size_t why_size)
{
    if (access(path, F_OK) != 0)
        return 1;
    dlerror();
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (*handle)
        return 0;
    const char *e = dlerror();
    snprintf(why, why_size, "%s", e ? e : "dlopen failed");
    return -1;
}

#ifdef PS_HAVE_CUDA
#define BUILT_HINT "set " PS_CUDA_MODULE_ENV " to its path"
#else
#define BUILT_HINT                                                                                 \
    "this pairsight was built without CUDA (PS_CUDA=OFF or no nvcc found): rebuild with "          \
    "-DPS_CUDA=ON to measure on a GPU, or set " PS_CUDA_MODULE_ENV " to the module of such a build"
#endif

static int load_locked(void)
{
    char why[1024] = "";
    void *h = NULL;
    const char *env = getenv(PS_CUDA_MODULE_ENV);
    if (env && *env) {
        int r = try_load(env, &h, why, sizeof why);
        if (r == 1)
            return psi_error(PS_E_BACKEND, "cuda: no CUDA module at %s=%s (%s)", PS_CUDA_MODULE_ENV, env,
                             strerror(ENOENT));
        if (r < 0)
            return psi_error(PS_E_BACKEND,
                             "cuda: cannot load the CUDA module %s: %s (are the CUDA 13 runtime, "
                             "cuBLAS, cuDNN 9 and CUPTI libraries installed and on the library path?)",
                             env, why);
        snprintf(module_path, sizeof module_path, "%s", env);
    } else {
        char dir[PATH_MAX];
        if (exe_dir(dir, sizeof dir) != 0)
            return psi_error(PS_E_BACKEND, "cuda: cannot read /proc/self/exe to find %s; %s", PS_CUDA_MODULE_FILE,
                             BUILT_HINT);
        char tried[2][PATH_MAX + 64];
        snprintf(tried[0], sizeof tried[0], "%s/%s", dir, PS_CUDA_MODULE_FILE);
        snprintf(tried[1], sizeof tried[1], "%s/../lib/pairsight/%s", dir, PS_CUDA_MODULE_FILE);
        int r = 1;
        for (int i = 0; i < 2 && r != 0; i++) {
            r = try_load(tried[i], &h, why, sizeof why);
            if (r < 0)
                return psi_error(PS_E_BACKEND,
                                 "cuda: cannot load the CUDA module %s: %s (are the CUDA 13 runtime, "
                                 "cuBLAS, cuDNN 9 and CUPTI libraries installed and on the library "
                                 "path?)",
                                 tried[i], why);
            if (r == 0)
                snprintf(module_path, sizeof module_path, "%.*s", PATH_MAX - 1, tried[i]);
        }
        if (r != 0)
            return psi_error(PS_E_BACKEND, "cuda: no CUDA module: %s is neither at %s nor at %s; %s",
                             PS_CUDA_MODULE_FILE, tried[0], tried[1], BUILT_HINT);
    }
    dlerror();
    void *sym = dlsym(h, PS_CUDA_MODULE_ENTRY);
    if (!sym) {
        const char *e = dlerror();
        /* Keep h loaded: unloading a library that may have started CUDA
         * threads is not worth the risk, and the process is about to fail. */
        return psi_error(PS_E_BACKEND, "cuda: %s is not a pairsight CUDA module: %s", module_path,
                         e ? e : "no " PS_CUDA_MODULE_ENTRY);
    }
    /* ISO C forbids casting void * to a function pointer; POSIX guarantees
     * that dlsym's result converts, so copy the bits. */
    memcpy(&module_open, &sym, sizeof module_open);
    psi_log(PS_LOG_DEBUG, "cuda: loaded %s", module_path);
    return 0;
}

int psi_backend_cuda_module_open(const ps_collect_params_t *p, psi_backend_t **out)
{
    *out = NULL;
    static const psi_cuda_host_t host = PS_CUDA_HOST_INIT;
    /* Opened under the lock too, so that the module sees one host at a time. */
    pthread_mutex_lock(&module_lock);
    int rc = module_open ? 0 : load_locked();
    if (rc == 0)
        rc = module_open(&host, p, out);
    pthread_mutex_unlock(&module_lock);
    return rc;
}
