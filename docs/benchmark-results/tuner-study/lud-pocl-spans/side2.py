"""LUD train-512 on PoCL: the study's and repeat.py's results, and i1 with i2's loop guards or i2's
suff_outer_par_6, side by side in 8 interleaved rounds of 10 runs (`side2.txt` holds the calm second pass).

    python docs/benchmark-results/tuner-study/lud-pocl-spans/side2.py OUT"""
import pathlib, sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from lud_train512 import side_by_side, study_results, tuned_results  # noqa: E402

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
S = study_results(HERE.parent / 'lud-pocl-f69afc6.json.gz')
I = tuned_results(HERE / 'instr.txt')
configs = {'tree': S['tree'], 'instrumented': S['instrumented'], **I}
configs['i1+i2loops'] = I['i1'] | {k: I['i2'][k] for k in ('main.suff_outer_par_10', 'main.suff_outer_par_14')}
configs['i1+i2o6'] = I['i1'] | {'main.suff_outer_par_6': I['i2']['main.suff_outer_par_6']}
side_by_side(configs, 'i2', 8, 10, OUT)
