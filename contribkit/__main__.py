from contribkit.cli import main

raise SystemExit(main())
