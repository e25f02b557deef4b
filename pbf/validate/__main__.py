"""``python -m pbf.validate slurm CONF WORKLOAD ...``: the harness without the main command line."""
import sys

from .command import main

sys.exit(main())
