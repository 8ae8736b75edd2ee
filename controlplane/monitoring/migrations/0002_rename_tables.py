from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("monitoring", "0001_initial")]

    operations = [
        migrations.AlterModelTable(name="clusterobservation", table=None),
        migrations.AlterModelTable(name="flowobservation", table=None),
        migrations.AlterModelTable(name="flowsample", table=None),
    ]
