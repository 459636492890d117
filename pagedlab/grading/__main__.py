import sys

sys.modules["rfc3987_syntax"] = None  # 1.3 s of CPU that nbformat never uses (see pagedlab.grading.supervise)

from pagedlab.grading.cli import main  # noqa: E402

sys.exit(main())
