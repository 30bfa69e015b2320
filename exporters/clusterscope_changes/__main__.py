import sys

from clusterscope_changes.main import main

sys.exit(main())
