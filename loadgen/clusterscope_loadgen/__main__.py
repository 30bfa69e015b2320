from clusterscope_loadgen.cli import main

raise SystemExit(main())
