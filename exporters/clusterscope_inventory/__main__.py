import sys

from clusterscope_inventory.main import main

sys.exit(main())
