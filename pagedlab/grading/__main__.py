import sys

from pagedlab.grading.cli import main

sys.exit(main())
