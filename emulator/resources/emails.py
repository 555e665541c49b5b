"""Sent emails: send, batch, list, get, reschedule, cancel, share, attachments, metrics.

Reference: reference/emails.md. Field parsing lives in `emulator/email_fields.py`, the delivery state
machine in `emulator/delivery_sim.py`; this module owns the tables, the services and the routes.
"""

from __future__ import annotations

TABLES = [
    # JSON columns: to_addrs (list), cc/bcc/reply_to (list or NULL when never given), headers (object or
    # NULL), tags (list of {name, value} or NULL). `eml` is the rendered RFC 5322 message, made once.
    """CREATE TABLE IF NOT EXISTS emails (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        key_id TEXT,
        source TEXT NOT NULL,
        from_addr TEXT NOT NULL,
        to_addrs TEXT NOT NULL,
        cc TEXT,
        bcc TEXT,
        reply_to TEXT,
        subject TEXT NOT NULL,
        html TEXT,
        text TEXT,
        headers TEXT,
        tags TEXT,
        scheduled_at TEXT,
        last_event TEXT NOT NULL,
        template_id TEXT,
        topic_id TEXT,
        broadcast_id TEXT,
        message_id TEXT NOT NULL,
        eml BLOB,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS emails_account ON emails (account, seq)",
    """CREATE TABLE IF NOT EXISTS email_attachments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email_id TEXT NOT NULL,
        filename TEXT,
        content_type TEXT NOT NULL,
        content_id TEXT,
        disposition TEXT NOT NULL,
        size INTEGER NOT NULL,
        content BLOB NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS email_attachments_email ON email_attachments (email_id, seq)",
]
