"""``python -m bench.generate --nodes N --pods P [--seed S] [--list] [--no-stats] [--volumes]``."""

import sys

from bench.generate.cli import main

sys.exit(main())
