import sys

from incflat.tuner.autotune import main

sys.exit(main(sys.argv[1:]))
