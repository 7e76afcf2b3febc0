/* pairsight serve: the library as an HTTP service for cluster schedulers
 * (src/serve, docs/serve.md). */
#include "cli/cli.h"

#include "pairsight_serve.h"

#include <stdio.h>
#include <string.h>

/* Examples end with --check (load, bind, exit), so that they run as
 * written (tests/test_cli_examples.sh); without it serve runs until stopped. */
static const char *const examples[] = {
    "pairsight serve --model out/model.psm --ops out/ops.csv --check",
    "pairsight serve --model out/model.psm --ops out/ops.csv --listen 127.0.0.1:0 --threads 4 --max-body 1048576 "
    "--check",
    NULL};

int cmd_serve(int argc, char **argv)
{
    ps_serve_params_t p = ps_serve_default_params();
    long max_body = (long)p.max_body;
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &p.model_path, "FILE", "trained segment model", .flags = CLI_REQ},
        {"--ops", CLI_STR, &p.ops_path, "FILE", "its standalone operator profile", .flags = CLI_REQ},
        {"--coloc", CLI_STR, &p.coloc_path, "FILE",
         "co-location model (colocate train) for /v1/colocate/score and /k8s/*; needs --workloads", .def = "none"},
        {"--workloads", CLI_STR, &p.workloads_path, "FILE", "workloads.csv of the co-location model", .def = "none"},
        {"--scaling", CLI_STR, &p.scaling_path, "FILE", "workload_scaling.csv", .def = "none"},
        {"--nodes", CLI_STR, &p.nodes_path, "FILE",
         "JSON object of node name -> pairsight.io/gpus, for extender requests that send NodeNames", .def = "none"},
        {"--listen", CLI_STR, &p.listen, "HOST:PORT", "IPv4 address and port (port 0: any free port)"},
        {"--threads", CLI_INT, &p.threads, "N", "server threads (each answers one request at a time)", .lo = 1,
         .hi = 256},
        {"--token-file", CLI_STR, &p.token_file, "FILE",
         "require 'Authorization: Bearer TOKEN' (the file's first line) on all but /healthz and /readyz",
         .def = "none"},
        {"--tls-cert", CLI_STR, &p.tls_cert, "FILE", "PEM certificate: serve HTTPS (with --tls-key)", .def = "none"},
        {"--tls-key", CLI_STR, &p.tls_key, "FILE", "PEM private key of --tls-cert", .def = "none"},
        {"--max-body", CLI_LONG, &max_body, "BYTES", "largest request body (413 beyond)", .lo = 1024, .hi = 1 << 30},
        {"--max-queries", CLI_INT, &p.max_queries, "N", "most queries per /v1/predict request (413 beyond)", .lo = 1,
         .hi = 10000000},
        {"--max-depth", CLI_INT, &p.max_depth, "N", "deepest JSON nesting of a request (400 beyond)", .lo = 2,
         .hi = 128},
        {"--timeout", CLI_INT, &p.timeout_s, "S", "close a connection idle for S seconds", .lo = 1, .hi = 3600},
        {"--request-timeout", CLI_INT, &p.request_timeout_s, "S",
         "close a connection whose request (headers and body) takes over S seconds, however steadily it trickles",
         .lo = 1, .hi = 3600},
        {"--max-connections", CLI_INT, &p.max_conns, "N", "connections at once (more are refused at accept)", .lo = 1,
         .hi = 65536},
        {"--max-connections-per-ip", CLI_INT, &p.max_conns_per_ip, "N",
         "connections at once from one client address (more are refused at accept)", .lo = 1, .hi = 65536},
        {"--max-work", CLI_LONG, &p.max_work, "N",
         "most co-location predictions one extender request may ask for (nodes x GPUs x (residents + 1); 413 beyond)",
         .lo = 1, .hi = 100000000},
        {"--allow-reload", CLI_FLAG, &p.allow_reload, NULL,
         "allow POST /v1/reload without --token-file (by default only SIGHUP reloads then)"},
        {"--allow-host", CLI_STR, &p.allow_hosts, "NAMES",
         "more names a request's Host may give (comma-separated; the listen address, localhost and IP literals always "
         "can)",
         .def = "none"},
        {"--check", CLI_FLAG, &p.check, NULL,
         "load the files, bind the address, say what would be served, and exit (0 when all is well)"},
        CLI_OPT_QUIET(&p.quiet),
        {NULL}};
    cli_spec_t spec = {
        .cmd = "serve",
        .synopsis = "--model FILE --ops FILE [--coloc FILE --workloads FILE [--scaling FILE]] [options]",
        .about = "Serve predictions over HTTP/1.1 with JSON bodies, for cluster schedulers:\n"
                 "POST /v1/predict, /v1/plan, /v1/colocate/score, /v1/reload, /k8s/filter and\n"
                 "/k8s/prioritize (a Kubernetes scheduler extender); GET /v1/models, /healthz,\n"
                 "/readyz and /metrics (Prometheus). SIGHUP or POST /v1/reload loads the files\n"
                 "anew; requests in flight finish on the old model, and a broken file leaves\n"
                 "the old one serving. -q drops the per-request log line. docs/serve.md.\n",
        .opts = opts,
        .examples = examples,
        .exit_status = "0 stopped by SIGINT or SIGTERM (with --check: started), 1 could not start (files, address,\n"
                       "TLS), 2 usage error.",
        .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    p.max_body = (size_t)max_body;
    if (!p.coloc_path != !p.workloads_path)
        return cli_fail(CLI_USAGE, "serve", "--coloc and --workloads go together");
    if (p.scaling_path && !p.coloc_path)
        return cli_fail(CLI_USAGE, "serve", "--scaling needs --coloc");
    if (!p.tls_cert != !p.tls_key)
        return cli_fail(CLI_USAGE, "serve", "--tls-cert and --tls-key go together");
    return ps_serve_run(&p);
}
