import sys

from pagelens.cli import main

sys.exit(main())
