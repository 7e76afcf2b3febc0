# Sourced by the overlap tests: make_abacus DIR builds a tiny Abacus-like git
# repository in DIR (the layout of Raphael-Hao/Abacus at 4c33e2e, made-up
# numbers): two commits, the second deletes data/profile as the real
# history does. The times follow makespan = max + 0.1 (sum - max) + 40 us of
# solo range times of 50 + 8 g us per group g (x batch / 4).
gen_rows() { # K MODELS(space-separated) N SEED MAXGROUPS(space-separated)
    awk -v k="$1" -v models="$2" -v n="$3" -v seed="$4" -v lens="$5" 'BEGIN {
        srand(seed); split(models, m, " "); split(lens, L, " ");
        hdr = "";
        for (i = 1; i <= k; i++) hdr = hdr "model,start,end,bs,seq_len,";
        print hdr "median,mean,var";
        for (r = 0; r < n; r++) {
            line = ""; mx = 0; sum = 0; act = 0;
            for (i = 1; i <= k; i++) {
                g = L[i]; S[i] = int(rand() * g); E[i] = S[i] + int(rand() * (g - S[i] + 1));
                if (r % 7 == 0 && i > 1) E[i] = S[i];        # single-active runs
                B[i] = 2 ^ (2 + int(rand() * 2)); Q[i] = m[i] == "bert" ? 8 * 2 ^ int(rand() * 2) : 0;
                if (E[i] > S[i]) act++;
            }
            if (!act) E[1] = S[1] + 1;                       # something runs, as in every row of the artefact
            act = 0;
            for (i = 1; i <= k; i++) {
                s = S[i]; e = E[i]; bs = B[i]; sq = Q[i];
                t = 0; for (x = s; x < e; x++) t += (50 + 8 * x) * bs / 4 * (sq ? sq / 8 : 1);
                if (e > s) { t += 30; act++ }
                if (t > mx) mx = t; sum += t;
                line = line m[i] "," s "," e "," bs "," sq ",";
            }
            y = mx + 0.1 * (sum - mx) + 40 + (r % 5);
            printf "%s%.1f,%.3f,%.3f\n", line, y, y + 1, 2.5;
        }
    }'
}

make_abacus() {
    d=$1
    mkdir -p "$d/data/profile/A100/2in7" "$d/data/profile/A100/3in4" "$d/data/profile/mig/2in4" "$d/abacus"
    gen_rows 2 "resnet50 vgg16" 160 1 "18 19" > "$d/data/profile/A100/2in7/resnet50_vgg16.csv"
    gen_rows 2 "resnet50 bert" 160 2 "18 12" > "$d/data/profile/A100/2in7/resnet50_bert.csv"
    gen_rows 2 "vgg16 bert" 160 3 "19 12" > "$d/data/profile/A100/2in7/vgg16_bert.csv"
    gen_rows 3 "resnet50 vgg16 bert" 60 4 "18 19 12" > "$d/data/profile/A100/3in4/resnet50_vgg16_bert.csv"
    gen_rows 2 "resnet50 bert" 60 5 "18 12" > "$d/data/profile/mig/2in4/resnet50_bert.csv"
    echo "not the artefact" > "$d/abacus/README"
    (cd "$d" && git init -q && git add -A &&
        git -c user.name=t -c user.email=t@t commit -qm profiles &&
        git rm -rq data/profile && git -c user.name=t -c user.email=t@t commit -qm "remove profiles")
}
