"""Choices of the clusters app; values are spelled as librdkafka and MM2 properties files spell them."""

from __future__ import annotations

from django.db import models


class SecurityProtocol(models.TextChoices):
    PLAINTEXT = "PLAINTEXT", "PLAINTEXT"
    SSL = "SSL", "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT", "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL", "SASL_SSL"


class SaslMechanism(models.TextChoices):
    NONE = "", "none"
    PLAIN = "PLAIN", "PLAIN"
    SCRAM_SHA_256 = "SCRAM-SHA-256", "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512", "SCRAM-SHA-512"


SASL_PROTOCOLS = frozenset({SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL})
SSL_PROTOCOLS = frozenset({SecurityProtocol.SSL, SecurityProtocol.SASL_SSL})
