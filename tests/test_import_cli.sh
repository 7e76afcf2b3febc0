#!/bin/sh
# pairsight import on the real layouts (tests/data), as a user runs it: one
# case of issue 12 per block, each checking the written rows and the summary
# line on stderr.
CLI=${1:?usage: test_import_cli.sh PAIRSIGHT}
. tests/clitest.sh
d=tests/data

# 1-2. The details page, pivoted by launch ID; display names and units.
expect 0 "$CLI" import ncu $d/ncu_details.csv --model resnet50 --tpcs 54 --out "$T/a.csv"
has "$T/err" "$T/a.csv: 3 operators of resnet50 batch 1 on A100-SXM4-80GB at 54 TPCs, 1.16 ms, from $d/ncu_details.csv (ncu details page); the file names the GPU NVIDIA A100-SXM4-80GB; 5 lines of other text ignored; skipped: nothing"
has "$T/a.csv" "A100-SXM4-80GB,resnet50,1,0,ampere_sgemm_128x64_tn,54,134300,12580000,88.12,45.21"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
expect 0 "$CLI" import ncu $d/ncu_details_2021.csv --gpu v100 --model resnet50 --tpcs 40 --out "$T/b.csv"
has "$T/b.csv" "V100-SXM2-16GB,resnet50,1,0,volta_scudnn_128x64_relu_interior_nn_v1,40,1020160,64.2,35.1"

# 3. Program output before and between the rows.
expect 0 "$CLI" import ncu $d/ncu_program_output.csv --model m --tpcs 40 --out "$T/c.csv"
has "$T/err" "3 operators of m batch 1 on V100-SXM2-32GB at 40 TPCs, 265 us, from $d/ncu_program_output.csv (ncu raw page); the file names the GPU Tesla V100-SXM2-32GB; 8 lines of other text ignored"

# 4. ncu's own errors.
expect 1 "$CLI" import ncu $d/ncu_error_app.csv --gpu v100 --model m --tpcs 40 --out "$T/x.csv"
has "$T/err" "pairsight: import: $d/ncu_error_app.csv: no Nsight Compute table; ncu said: ==ERROR== The application returned an error code (1)."
expect 1 "$CLI" import ncu $d/ncu_error_section.csv --gpu v100 --model m --tpcs 40 --out "$T/x.csv"
has "$T/err" "ncu said: ==ERROR== Option '--section SpeedOfLite' did not match any section."
[ -e "$T/x.csv" ] && fail "a refused import wrote its output"

# 5. Several processes and devices.
expect 0 "$CLI" import ncu $d/ncu_multi_process.csv --model m --tpcs 66 --out "$T/e.csv"
has "$T/err" "took process 4242 device 0; 2 lines of other text ignored; skipped: process 4243 device 1: 2 kernels, 17 us; process 4242 device 1: 1 kernels, 3 us"
expect 0 "$CLI" import ncu $d/ncu_multi_process.csv --process 4243 --device 1 --model m --tpcs 66 --out "$T/e.csv"
has "$T/err" "2 operators of m batch 1 on H100-SXM at 66 TPCs"
expect 1 "$CLI" import ncu $d/ncu_multi_process.csv --process 1 --model m --tpcs 66 --out "$T/e.csv"
has "$T/err" "no launches of process 1 (the report has process 4242 device 0, process 4243 device 1, process 4242 device 1)"
expect 2 "$CLI" import torch-trace $d/torch_ddp.json --process 1 --model m --tpcs 66 --out "$T/e.csv"
has "$T/err" "--process applies to ncu and nsys only"

# 6. Streams: compute, not NCCL; --stream all.
expect 0 "$CLI" import torch-trace $d/torch_ddp.json --model bert --tpcs 66 --out "$T/f.csv"
has "$T/err" "5 operators of bert batch 1 on H100-SXM at 66 TPCs, 320 us, from $d/torch_ddp.json (PyTorch trace schemaVersion 1); the file names the GPU NVIDIA H100 80GB HBM3; took stream 7; skipped: stream 22: 2 kernels, 24 us; stream 20: 2 kernels, 1.35 ms (communication)"
expect 0 "$CLI" import torch-trace $d/torch_ddp.json --stream all --model bert --tpcs 66 --out "$T/f.csv"
has "$T/err" "7 operators of bert batch 1 on H100-SXM at 66 TPCs, 344 us"
has "$T/err" "took streams 7, 22; skipped: stream 20: 2 kernels, 1.35 ms (communication)"
expect 1 "$CLI" import torch-trace $d/torch_ddp.json --stream 3 --model bert --tpcs 66 --out "$T/f.csv"
has "$T/err" "no kernels on stream 3 (streams: 7, 22, 20)"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --stream all --gpu v100 --model bert --tpcs 40 --out "$T/f.csv"
has "$T/err" "--stream applies to torch-trace and nsys only"

# 7. gzip.
expect 0 "$CLI" import torch-trace $d/torch_ddp.json.gz --model bert --tpcs 66 --out "$T/g.csv" --json
has "$T/err" "(PyTorch trace schemaVersion 1, gzip)"
has "$T/out" '"format":"PyTorch trace schemaVersion 1, gzip"'
expect 0 "$CLI" import torch-trace $d/torch_ddp.json --model bert --tpcs 66 --out "$T/g2.csv"
cmp -s "$T/g.csv" "$T/g2.csv" || fail "the gzip trace imported differently"

# 8. Zero durations.
expect 0 "$CLI" import torch-trace $d/torch_pt18.json --gpu v100 --model r --tpcs 40 --out "$T/h.csv"
has "$T/err" "pairsight: warning: import: $d/torch_pt18.json: 2 kernels have dur 0 (shorter than the trace's time resolution, 1 us): each kept as half of it"
has "$T/err" "6 operators of r batch 1 on V100-SXM2-16GB at 40 TPCs, 222 us, from $d/torch_pt18.json (PyTorch trace no schemaVersion, cat Kernel (PyTorch 1.8/1.9)); took stream 7; 2 kernels with dur 0 kept"
has "$T/h.csv" ",40,500"
expect 0 "$CLI" import torch-trace $d/torch_pt18.json --drop-zero --gpu v100 --model r --tpcs 40 --out "$T/h.csv"
has "$T/err" "4 operators of r batch 1"
has "$T/err" "2 kernels with dur 0 dropped"
expect 2 "$CLI" import ncu $d/ncu_raw.csv --drop-zero --gpu v100 --model bert --tpcs 40 --out "$T/h.csv"

# 9. GPU names from the file; --tpcs beyond them; unknown GPUs pass.
expect 2 "$CLI" import torch-trace $d/torch_ddp.json --model bert --tpcs 67 --out "$T/i.csv"
has "$T/err" "pairsight: import: --tpcs: 67 exceeds the 66 TPCs of H100-SXM (the file names NVIDIA H100 80GB HBM3)"
expect 2 "$CLI" import torch-trace $d/torch_pt18.json --model bert --tpcs 40 --out "$T/i.csv"
has "$T/err" "the file names no GPU: give --gpu"
expect 0 "$CLI" import torch-trace $d/torch_mi300x.json --model llama --tpcs 152 --out "$T/i.csv"
has "$T/err" "pairsight: warning: import: GPU 'AMD Instinct MI300X' is not in the catalog"
has "$T/i.csv" "AMD Instinct MI300X,llama,1,0,Cijk_"
expect 0 "$CLI" check "$T/i.csv"

# 10. One model from several files: a trace, counters of the same run, another
# TPC count; a mismatch writes nothing.
expect 0 "$CLI" import torch-trace $d/torch_bert.json --model bert --batch 8 --tpcs 40 --out "$T/m.csv" --append
expect 0 "$CLI" import ncu $d/ncu_raw.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 40 --out "$T/m.csv" --append
has "$T/err" "merged into $T/m.csv: 0 rows added, 3 rows' empty counters filled, 3 rows in all"
expect 0 "$CLI" import ncu $d/ncu_raw_20tpcs.csv --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 20 --out "$T/m.csv" --append
has "$T/err" "3 rows added, 0 rows' empty counters filled, 6 rows in all"
has "$T/m.csv" "V100-SXM2-16GB,bert,8,0,volta_sgemm_128x64_nn,40,131500,12580000"
cp "$T/m.csv" "$T/keep.csv"
expect 1 "$CLI" import torch-trace $d/torch_ddp.json --gpu V100-SXM2-16GB --model bert --batch 8 --tpcs 20 --out "$T/m.csv" --append
has "$T/err" "the file was profiled on NVIDIA H100 80GB HBM3, not on V100-SXM2-16GB"
# A B200 profile (another row of the catalog) written as an A100's: an error
# unless forced.
expect 1 "$CLI" import torch-trace $d/torch_b200.json --gpu a100 --model m --tpcs 40 --out "$T/b200.csv"
has "$T/err" "the file was profiled on NVIDIA B200, not on A100-SXM4-40GB: give the file's GPU, or force"
[ ! -e "$T/b200.csv" ] || fail "a refused import wrote its --out"
expect 0 "$CLI" import torch-trace $d/torch_b200.json --gpu a100 --force-gpu --model m --tpcs 40 --out "$T/b200.csv"
has "$T/err" "profiled on NVIDIA B200; the rows name A100-SXM4-40GB as forced"
expect 0 "$CLI" import torch-trace $d/torch_b200.json --model m --tpcs 40 --out "$T/b200.csv"
expect 1 "$CLI" import torch-trace $d/torch_ddp.json --gpu V100-SXM2-16GB --force-gpu --model bert --batch 8 --tpcs 20 --out "$T/m.csv" --append
has "$T/err" "the kernel sequences differ at op 0"
cmp -s "$T/m.csv" "$T/keep.csv" || fail "a refused --append changed the file"
expect 0 "$CLI" check "$T/m.csv"
has "$T/out" "ops, 6 rows, 1 (model, batch) groups"

# The help documents pages, streams, gzip and zero durations, with examples.
expect 0 "$CLI" import --help
for w in "Pages (ncu)" "Streams (torch-trace)" "gzip (torch-trace)" "Zero durations (torch-trace)" \
    "--stream all" "--drop-zero" "json.gz" "--process 4243"; do
    has "$T/out" "$w"
done

finish test_import_cli
