import sys

from incflat.tuner.command import main

sys.exit(main(sys.argv[1:]))
