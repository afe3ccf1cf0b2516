"""ldacli's HTML pages: the frame every page shares and the report."""
