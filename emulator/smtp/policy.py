"""What the SMTP relay announces and allows (reference/smtp.md), shared by the listener and the session."""

USERNAME = "resend"
HOSTNAME = "localhost"  # always passed: aiosmtpd's default calls getfqdn(), which can take seconds
IDENT = "Resend Emulator ESMTP"
MAX_MESSAGE_BYTES = 40 * 1024 * 1024  # the API's 40 MB limit, advertised as SIZE 41943040
# [rec] to, cc and bcc may hold 50 each. Which envelope recipients end up in To/Cc and which become
# Bcc is only known after DATA, so the envelope is held to 50 and the 51st RCPT is refused at once, as a
# relay with a recipient limit does (issue 11: 150 were accepted and the message refused at DATA).
MAX_RECIPIENTS = 50
