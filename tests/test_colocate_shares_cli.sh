#!/bin/sh
# pairsight colocate shares (issue 39): the choice, its JSON reply
# (pairsight.shares.v1), --emit dra|env|yaml with the field names of the
# Go types it targets, and bad input: unknown workloads, empty sets,
# candidates that do not add up, floors no share can meet.
CLI=${1:?usage: test_colocate_shares_cli.sh PAIRSIGHT}
. "$(dirname "$0")/clitest.sh"
D=tests/data/colocate
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W="--workloads $D/workloads.csv --scaling $D/workload_scaling.csv"
A=alpha_batch2-inf
B=beta_batch4-train
C=gamma_batch1-inf

expect 0 "$CLI" colocate train --workloads $D/workloads.csv --scaling $D/workload_scaling.csv \
    --colocations $D/colocations3.csv --kind mps --rounds 40 -q --out "$T/m.psc"
M="--model $T/m.psc $W"

# The table: the chosen shares beside uniform and 100 each.
expect 0 "$CLI" colocate shares $M --set $A,$B
has "$T/out" "uniform"
has "$T/out" "100 each"
has "$T/out" "$A"

# JSON: the schema, shares of the grid (step 10, total <= 100), the chosen
# objective no lower than uniform's (uniform 50/50 is on the grid).
expect 0 "$CLI" colocate shares $M --set $A,$B --json
cp "$T/out" "$T/r.json"
$PY - "$T/r.json" "$A" "$B" <<'EOF' || fail "shares JSON"
import json, sys
r = json.load(open(sys.argv[1])); a, b = sys.argv[2], sys.argv[3]
assert r["schema"] == "pairsight.shares.v1", r
s = r["shares"]
assert set(s) == {a, b}, s
assert all(v % 10 == 0 and 10 <= v <= 90 for v in s.values()), s
assert s[a] + s[b] <= 100, s
assert r["candidates"] == 45, r["candidates"]
assert r["objective_value"] >= r["uniform"]["objective_value"] - 1e-12, r
assert r["uniform"]["shares"] == {a: 50, b: 50}, r["uniform"]
assert r["full"]["shares"] == {a: 100, b: 100}, r["full"]
assert abs(sum(r["predicted"][w]["norm_tput"] for w in s) - r["objective_value"]) < 1e-9
assert r["predicted"][a]["bound"] is None and r["calibrated"] is False
EOF

# The choice is the best of the candidates: every given candidate's
# objective (from a run with that one alone) is at most the chosen one's.
expect 0 "$CLI" colocate shares $M --set $A,$B --candidates 20/80,50/50,80/20 --json
cp "$T/out" "$T/c.json"
for c in 20/80 50/50 80/20; do
    expect 0 "$CLI" colocate shares $M --set $A,$B --candidates $c --json
    $PY -c "import json,sys; a=json.load(open('$T/c.json')); b=json.load(open('$T/out'));
assert a['candidates'] == 3 and a['step'] is None
assert b['objective_value'] <= a['objective_value'] + 1e-12, (b, a)" || fail "candidate $c beats the choice"
done

# min and weighted objectives, floors, max-total 200 (the grid then holds 100/100).
expect 0 "$CLI" colocate shares $M --set $A,$B --objective min --json
$PY -c "import json; r=json.load(open('$T/out')); p=r['predicted'];
assert abs(min(v['norm_tput'] for v in p.values()) - r['objective_value']) < 1e-12" || fail "min objective"
expect 0 "$CLI" colocate shares $M --set $A,$B --objective weighted:$A=5 --json
$PY -c "import json; r=json.load(open('$T/out')); p=r['predicted'];
assert abs(5*p['$A']['norm_tput'] + p['$B']['norm_tput'] - r['objective_value']) < 1e-9
assert r['weights'] == {'$A': 5, '$B': 1}, r" || fail "weighted objective"
expect 0 "$CLI" colocate shares $M --set $A,$B --max-total 200 --json
$PY -c "import json; r=json.load(open('$T/out')); assert r['candidates'] == 100 and r['full']['feasible'], r['candidates']" ||
    fail "max-total 200 grid"
expect 0 "$CLI" colocate shares $M --set $A,$B,$C --step 20 --json
$PY -c "import json; r=json.load(open('$T/out')); assert r['candidates'] == 10 and len(r['shares']) == 3, r" ||
    fail "3-way grid"

# A floor a workload can just meet is met; one above its best is named.
$PY -c "import json; r=json.load(open('$T/r.json')); print(round(r['uniform']['norm_tput']['$A'] * 0.99, 6))" \
    >"$T/fl" || fail "floor value"
expect 0 "$CLI" colocate shares $M --set $A,$B --floor "$A=$(cat "$T/fl")" --json
$PY -c "import json; r=json.load(open('$T/out')); assert r['predicted']['$A']['norm_tput'] >= $(cat "$T/fl")" ||
    fail "floor kept"
expect 1 "$CLI" colocate shares $M --set $A,$B --floor $B=50
has "$T/err" "floor of $B (50)"
has "$T/err" "infeasible"
expect 1 "$CLI" colocate shares $M --set $A,$B --floor $B=50 --json
has "$T/out" '"feasible":false'
has "$T/out" '"constraint":"floor"'
expect 1 "$CLI" colocate shares $M --set $A,$B --slo $A=0.000001
has "$T/err" "SLO of $A"
# An SLO that only larger shares meet: the chosen share meets it.
expect 0 "$CLI" colocate shares $M --set $A,$B --slo $A=1000 --json
has "$T/out" '"slo_min_share"'

# Bad input.
expect 1 "$CLI" colocate shares $M --set $A,nosuch_batch1-inf
has "$T/err" "nosuch_batch1-inf"
expect 2 "$CLI" colocate shares $M --set ""
has "$T/err" "set"
expect 2 "$CLI" colocate shares $M --set $A
has "$T/err" "a set needs 2"
expect 2 "$CLI" colocate shares $M --set $A,,$B
has "$T/err" "empty workload name"
# Two replicas of one workload: the second is A#2 in maps and the reply.
expect 0 "$CLI" colocate shares $M --set $A,$A --floor "$A#2=0.1" --json
$PY -c "import json; r=json.load(open('$T/out')); assert list(r['shares']) == ['$A', '$A#2'], r
assert r['floor'] == {'$A#2': 0.1}, r" || fail "replicas"
expect 0 "$CLI" colocate shares $M --set $A,$A --candidates 30/70 --emit dra
has "$T/out" "name: alpha-batch2-inf-2"
expect 2 "$CLI" colocate shares $M --set $A,$B --candidates 60/60
has "$T/err" "sums to 120, above max_total 100"
expect 2 "$CLI" colocate shares $M --set $A,$B --candidates 30/70/10
has "$T/err" "3 shares for 2 workloads"
expect 2 "$CLI" colocate shares $M --set $A,$B --candidates 0/100
has "$T/err" "outside 1..100"
expect 2 "$CLI" colocate shares $M --set $A,$B --candidates 30/x
has "$T/err" "expected A/B"
expect 2 "$CLI" colocate shares $M --set $A,$B --floor $C=0.5
has "$T/err" "'$C' is not in the set"
expect 2 "$CLI" colocate shares $M --set $A,$B --floor $A
has "$T/err" "NAME=NUMBER"
expect 2 "$CLI" colocate shares $M --set $A,$B --objective max
has "$T/err" "sum, min or weighted"
expect 2 "$CLI" colocate shares $M --set $A,$B --emit helm
has "$T/err" "dra, env or yaml"
expect 2 "$CLI" colocate shares $M --set $A,$B,$C --step 1
has "$T/err" "more than 4096 candidates"

# --emit env: one env line per workload, the chosen shares.
expect 0 "$CLI" colocate shares $M --set $A,$B --emit env
$PY - "$T/out" "$T/r.json" <<'EOF' || fail "emit env"
import json, sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if not l.startswith("#")]
r = json.load(open(sys.argv[2]))
assert lines == ["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d" % v for v in r["shares"].values()], lines
EOF

# --emit dra: every key of the YAML is a json tag of the Go types it
# targets, recorded from kubernetes-sigs/dra-driver-nvidia-gpu at commit
# 95932046683719c43b6a0dd9613c2e5aad5d6703 (api/nvidia.com/resource/v1beta1/
# gpuconfig.go, sharing.go; vendor/k8s.io/api v0.36.0 resource/v1/types.go and
# core/v1/types.go), and the values it names are the driver's constants.
expect 0 "$CLI" colocate shares $M --set $A,$B --candidates 30/70 --emit dra
cp "$T/out" "$T/dra.yaml"
$PY - "$T/dra.yaml" "$A" "$B" <<'EOF' || fail "emit dra"
import re, sys
text = open(sys.argv[1]).read()
a, b = sys.argv[2], sys.argv[3]
known = {
    # metav1.TypeMeta, ObjectMeta
    "apiVersion", "kind", "metadata", "name",
    # resource.k8s.io/v1: ResourceClaimTemplate{metadata, spec}, ResourceClaimTemplateSpec{metadata, spec},
    # ResourceClaimSpec{devices}, DeviceClaim{requests, constraints, config}, DeviceRequest{name, exactly,
    # firstAvailable}, ExactDeviceRequest{deviceClassName, ...}, DeviceClaimConfiguration{requests, opaque},
    # OpaqueDeviceConfiguration{driver, parameters}
    "spec", "devices", "requests", "exactly", "deviceClassName", "config", "opaque", "driver", "parameters",
    # resource.nvidia.com/v1beta1: GpuConfig{sharing}, GpuSharing{strategy, mpsConfig}, MpsConfig{...}
    "sharing", "strategy", "mpsConfig", "defaultActiveThreadPercentage", "defaultPinnedDeviceMemoryLimit",
    "defaultPerDevicePinnedMemoryLimit",
    # core/v1: PodSpec{resourceClaims, containers}, PodResourceClaim{name, resourceClaimTemplateName},
    # Container{name, image, resources, env}, ResourceRequirements{claims}, ResourceClaim{name, request},
    # EnvVar{name, value}
    "resourceClaims", "resourceClaimTemplateName", "containers", "image", "resources", "claims", "request",
    "env", "value",
}
keys = set()
for line in text.splitlines():
    line = line.split("#")[0].rstrip()
    m = re.match(r'^\s*(?:- )?("?[A-Za-z0-9_]+"?):', line)
    if m and not m.group(1).startswith('"'):
        keys.add(m.group(1))
assert keys <= known, keys - known
for need in ["apiVersion: resource.k8s.io/v1", "kind: ResourceClaimTemplate", "deviceClassName: gpu.nvidia.com",
             "driver: gpu.nvidia.com", "apiVersion: resource.nvidia.com/v1beta1", "kind: GpuConfig",
             "strategy: MPS", "defaultActiveThreadPercentage: 70", "MPSSupport",
             "name: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", 'value: "30"', "resourceClaimTemplateName: pairsight-mps"]:
    assert need in text, need
# the larger share is the claim's; only the smaller one gets an env entry
assert text.count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == text.count('value: "30"') + 1, text
# memcap_gb 3.7 (the larger of the set) + 10 % rounded up
assert "defaultPinnedDeviceMemoryLimit: 5Gi" in text, text
# container names are DNS labels
for n in re.findall(r"- name: (\S+)  #", text):
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", n) and len(n) <= 63, n
EOF
if $PY -c "import yaml" 2>/dev/null; then
    $PY -c "import yaml,sys; d=list(yaml.safe_load_all(open('$T/dra.yaml')));
p=d[0]['spec']['spec']['devices']['config'][0]['opaque']['parameters']
assert p['sharing']['mpsConfig']['defaultActiveThreadPercentage'] == 70, p
assert d[1]['spec']['containers'][0]['env'][0]['value'] == '30'" || fail "dra YAML does not parse"
fi
# Equal shares: the claim's percentage alone, no env entries.
expect 0 "$CLI" colocate shares $M --set $A,$B --candidates 50/50 --emit dra
has "$T/out" "defaultActiveThreadPercentage: 50"
grep -q "name: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" "$T/out" && fail "env entries for equal shares"
expect 0 "$CLI" colocate shares $M --set $A,$B --emit yaml
has "$T/out" "schema: \"pairsight.shares.v1\""
has "$T/out" "shares:"

finish test_colocate_shares_cli
