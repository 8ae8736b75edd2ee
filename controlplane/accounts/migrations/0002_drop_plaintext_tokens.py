from django.db import migrations


class Migration(migrations.Migration):
    """Delete DRF's token table (``rest_framework.authtoken``), which kept every token in plain text.

    Its tokens stop working: their users create new ones (``manage.py token create USER``). Its rows in
    django_migrations go too, so the app could be installed again from scratch.
    """

    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.RunSQL(
            [
                "DROP TABLE IF EXISTS authtoken_token",
                "DELETE FROM django_migrations WHERE app = 'authtoken'",
            ],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
