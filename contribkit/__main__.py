from contribkit.cli.app import main

raise SystemExit(main())
