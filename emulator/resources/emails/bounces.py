"""The `bounce` object of `email.bounced` (reference webhooks.md §6.2, §6.9).

Two texts are the real service's, from recorded `email.bounced` payloads [rec]: the hard bounce of
`bounced@resend.dev`, and the account-suppression-list notice. Client libraries classify bounces by
them. The texts for the other subtypes are ours, written in the same style.
"""

from __future__ import annotations

from typing import Any

HARD_BOUNCE = (
    "The recipient's email provider sent a hard bounce message, but didn't specify the reason for the hard"
    " bounce. We recommend removing the recipient's email address from your mailing list. Sending messages"
    " to addresses that produce hard bounces can have a negative impact on your reputation as a sender."
)
ACCOUNT_SUPPRESSED = (
    "Resend has suppressed sending to this address because it is on the account-level suppression list."
    " This does not count toward your bounce rate metric"
)
TYPES = ("Permanent", "Transient", "Undetermined")
SUBTYPES = ("Undetermined", "General", "NoEmail", "MailboxFull", "MessageTooLarge", "ContentRejected",
            "AttachmentRejected")
DEFAULT_SUBTYPE = {"Permanent": "NoEmail", "Transient": "General", "Undetermined": "Undetermined"}

# subType → (diagnostic code, message). Ours except where the module docstring says otherwise.
_DETAILS = {
    "NoEmail": ("smtp; 550 5.1.1 user unknown", HARD_BOUNCE),
    "General": ("smtp; 550 5.0.0 message rejected", HARD_BOUNCE),
    "MailboxFull": ("smtp; 452 4.2.2 mailbox full",
                    "The recipient's email provider sent a soft bounce message because the recipient's inbox"
                    " is full. Resend may succeed in delivering later emails to this address."),
    "MessageTooLarge": ("smtp; 552 5.3.4 message size exceeds limit",
                        "The recipient's email provider rejected the email because it is larger than the"
                        " provider accepts. Reduce the size of the email or its attachments and try again."),
    "ContentRejected": ("smtp; 550 5.7.1 message content rejected",
                        "The recipient's email provider rejected the email because of its content. Review the"
                        " email for content that spam filters may flag."),
    "AttachmentRejected": ("smtp; 550 5.7.1 attachment rejected",
                           "The recipient's email provider rejected the email because of one of its"
                           " attachments. Remove or change the attachment and try again."),
    "Undetermined": ("smtp; 554 5.0.0 undetermined",
                     "The recipient's email provider sent a bounce message that doesn't say whether the"
                     " bounce is permanent. We recommend checking the recipient's email address."),
}
_TRANSIENT_GENERAL = ("smtp; 451 4.0.0 temporary failure",
                      "The recipient's email provider sent a soft bounce message, but didn't specify the"
                      " reason for the soft bounce. Resend may succeed in delivering later emails to this"
                      " address.")


def bounce(kind: str = "Permanent", subtype: str | None = None, recipients: int = 1) -> dict[str, Any]:
    """The `bounce` object for `recipients` impacted addresses (one diagnostic code each)."""
    subtype = subtype or DEFAULT_SUBTYPE[kind]
    code, message = _TRANSIENT_GENERAL if (kind, subtype) == ("Transient", "General") else _DETAILS[subtype]
    return {"diagnosticCode": [code] * recipients, "message": message, "subType": subtype, "type": kind}
