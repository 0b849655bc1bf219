import sys

from tuner.autotune import main

sys.exit(main(sys.argv[1:]))
