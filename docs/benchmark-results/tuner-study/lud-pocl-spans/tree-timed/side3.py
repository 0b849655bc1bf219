"""LUD train-512 on PoCL: the tree-timed experiment's two results beside the study's `tree` result and i2,
8 interleaved rounds of 10 runs.

    python docs/benchmark-results/tuner-study/lud-pocl-spans/tree-timed/side3.py OUT"""
import pathlib, sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from lud_train512 import side_by_side, study_results, tuned_results  # noqa: E402

OUT = pathlib.Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
timed_tree = tuned_results(HERE / 'tree_exp.txt')
configs = {'tree': study_results(HERE.parents[1] / 'lud-pocl-f69afc6.json.gz')['tree'],
           'i2': tuned_results(HERE.parent / 'instr.txt')['i2'],
           'tree-timed t1': timed_tree['t1'], 'tree-timed t2': timed_tree['t2']}
side_by_side(configs, 'tree', 8, 10, OUT)
