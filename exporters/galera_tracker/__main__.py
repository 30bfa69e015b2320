import sys

from galera_tracker.main import main

sys.exit(main())
