import sys

from pagedlab.grading.grade import main

sys.exit(main())
