# session 34: the CPU studies of docs/tuning.md ("Session of 2026-11-27, paired"), run from the repository root
# on this machine (Intel's CPU OpenCL, `ci` datasets), each at the commit its record names
T=docs/benchmark-results/tuner-study
S="futhark_examples/benchmarks"
P="heston32 srad srad_batch lavamd nn_batch pathfinder_batch backprop optionpricing locvolcalib"
# random's results of the bf35c80 study, to reuse
python3 -c "
import gzip, json
study = json.load(gzip.open('$T/cpu-intel-bf35c80.json.gz'))
for p in study: p['strategies'] = [s for s in p['strategies'] if s['strategy'] == 'random']
json.dump(study, open('/tmp/reuse-cpu.json', 'w'))"
# cpu-intel-1b79df4.md (at 1b79df4), then cpu-intel-a5f91ac.md (at a5f91ac; its two parts joined)
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu
# cpu-intel-1b79df4-in-turn.md (at 2ee1cff): 1b79df4's results judged again
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/cpu-1b79df4/study.json --exclude-case train --exclude-case paper --out /tmp/cpu-judge
# cpu-intel-011ced2-lud.md and -lud-budget300.md (python3 futhark_examples/gen_data.py lud --tag train first)
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented,bandit --out /tmp/lud
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented,bandit --budget 300 --out /tmp/lud300
# session 35: cpu-intel-c315f8c.md (at c315f8c), random's results of the a5f91ac study reused
python3 -c "
import gzip, json
study = json.load(gzip.open('$T/cpu-intel-a5f91ac.json.gz'))
for p in study: p['strategies'] = [s for s in p['strategies'] if s['strategy'] == 'random']
json.dump(study, open('/tmp/reuse-cpu.json', 'w'))"
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu-c315
# session 35: cpu-intel-s35-lud-1.md to -3.md, three times in a row
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented --out /tmp/lud-c315-1
# session 35: cpu-intel-94510a4.md (the suite, as cpu-intel-c315f8c.md) and cpu-intel-94510a4-lud.md, at 94510a4
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu-best
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented --out /tmp/lud-94510a4
# session 36: cpu-intel-632ba6d.md (the suite, as cpu-intel-c315f8c.md) and cpu-intel-632ba6d-lud.md, at 632ba6d
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu-632b
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented --out /tmp/lud-632b
# session 36: cpu-intel-82738e8.md (the suite, as above) and cpu-intel-82738e8-lud-budget300.md, at 82738e8
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu-8273
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented,bandit --budget 300 --out /tmp/lud-8273
# session 36: the two 82738e8 studies judged again at a1a9552 (a warm-up run in each order), nothing tuned
python3 futhark_examples/tuner_study.py $S/lud.fut --runs 3 --exclude-case ci --exclude-case paper \
    --strategies tree,instrumented,bandit --reuse /tmp/lud-8273/study.json --out /tmp/lud-8273-judge
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/cpu-8273/study.json --exclude-case train --exclude-case paper --out /tmp/cpu-8273-judge
# session 38: cpu-intel-35ac008.md (at 35ac008, in a clean clone; `gen_data.py $P --tag ci` first), random's
# results of the a5f91ac study reused as above
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu-s38
# session 38: cpu-intel-f760970.md (at f760970, each configuration's results checked), the same command again
python3 futhark_examples/tuner_study.py $(for p in $P; do echo $S/$p.fut; done) --runs 3 --strategies tree,random \
    --reuse /tmp/reuse-cpu.json --exclude-case train --exclude-case paper --out /tmp/cpu-s38b
