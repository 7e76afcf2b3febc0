#!/bin/sh
# docs/ARCHITECTURE.md's recipe "Adding a GPU", followed on a toy GPU: one
# row in src/profile/gpu.c's catalog[] and one line of its device-name table,
# nothing else. The library of the build under test with that file alone
# recompiled (its flags, from CMake's flags.make) and the CLI linked again
# (its link.txt): `simulate --list`, `--help`, the unknown-GPU message and a
# simulated campaign on the toy GPU then know it, and `import` names a
# profile of "NVIDIA Toy GPU" as the row (the device-name table).
CLI=${1:?usage: test_gpu_recipe.sh PAIRSIGHT}
. tests/clitest.sh
. tests/recipe.sh

# The edit of the recipe: a row (after H200's) and a device name.
awk '{ print }
     /^static const psi_gpu_t catalog\[\] = \{/ { print "    {.name = \"TOY-GPU\", .aliases = {\"toy\", NULL, NULL, NULL}, .sms = 40, .tpcs = 20, .clock_ghz = 1.5,"
                                                   print "     .tensor_tflops = 100.0, .tf32_tflops = 50.0, .fp32_tflops = 12.0, .dram_gbs = 800.0, .l2_mb = 8.0,"
                                                   print "     .l2_gbs = 2000.0}," }
     /^    \{"H100 80GB HBM3", "H100-SXM"\},/ { print "    {\"Toy GPU\", \"TOY-GPU\"}," }' \
    src/profile/gpu.c > "$T/gpu.c"
[ "$(grep -c TOY-GPU "$T/gpu.c")" -eq 2 ] || { echo "FAIL: the recipe's two edits did not apply to src/profile/gpu.c"; exit 1; }
recipe_compile pairsight_obj libpairsight.a "$T/gpu.c"
recipe_link
P=$T/pairsight

expect 0 "$P" simulate --list
has "$T/out" "  TOY-GPU "
expect 0 "$P" simulate --help
has "$T/out" "TOY-GPU (toy)"
expect 2 "$P" simulate --gpu nope --out "$T/x"
has "$T/err" "TOY-GPU (toy)"
expect 0 "$P" simulate --gpu toy --pairs resnet50:8/bert-base:8 --experiments 4 --runs 1 --threads 1 --out "$T/s" -q
has "$T/s/coexec.csv" ",TOY-GPU,resnet50,8,"
# The device-name line: a trace of "NVIDIA Toy GPU" is the row's.
sed 's/NVIDIA H100 80GB HBM3/NVIDIA Toy GPU/' tests/data/torch_ddp.json > "$T/toy.json"
expect 0 "$P" import torch-trace "$T/toy.json" --model bert --batch 8 --tpcs 20 --out "$T/toy.csv"
has "$T/toy.csv" "TOY-GPU,bert,8,"
# The unchanged CLI does not know it (the test would pass without the edit otherwise).
expect 2 "$CLI" simulate --gpu toy --out "$T/y"
cd "$ROOT" || exit 1
finish test_gpu_recipe
