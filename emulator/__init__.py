"""resend-emulator: a high-fidelity local emulator of the Resend email API."""

__version__ = "0.1.0"
