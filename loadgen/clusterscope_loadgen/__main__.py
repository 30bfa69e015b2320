from clusterscope_loadgen.commandline import main

raise SystemExit(main())
