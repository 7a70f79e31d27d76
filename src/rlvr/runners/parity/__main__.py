"""`python -m rlvr.runners.parity record|replay ...`: build parity records or replay them through one backend."""

import sys

from rlvr.runners.parity.replay import main

sys.exit(main())
