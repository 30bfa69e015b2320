from ndbinfo_exporter.main import main

raise SystemExit(main())
