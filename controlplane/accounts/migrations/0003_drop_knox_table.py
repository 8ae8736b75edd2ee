from django.db import migrations


class Migration(migrations.Migration):
    """Delete the table of knox's own token model, which ``accounts.ApiToken`` replaces (``KNOX_TOKEN_MODEL``).

    knox's migrations create it although the model is swapped out, and nothing writes it; but its foreign key to the
    users table made Postgres refuse to truncate that table (Django's ``flush``, the tests' teardown). knox is
    pinned: a later knox migration that touches its table must be read before it is taken.
    """

    dependencies = [("accounts", "0002_drop_plaintext_tokens"), ("knox", "0009_extend_authtoken_field")]

    operations = [migrations.RunSQL("DROP TABLE IF EXISTS knox_authtoken", reverse_sql=migrations.RunSQL.noop)]
