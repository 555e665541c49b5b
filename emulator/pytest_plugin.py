"""pytest fixtures for suites that test code sending mail through Resend (see README)."""
