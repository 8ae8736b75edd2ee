"""Dates and times as the rest of the product writes them: 24-hour clock, day before month, UTC unless said.

Django's own English formats use a 12-hour clock ("3:05 p.m."), which the admin and any template that prints a
datetime would show beside the 24-hour times of the pages' scripts. FORMAT_MODULE_PATH points here.
"""

DATE_FORMAT = "j M Y"
TIME_FORMAT = "H:i:s"
DATETIME_FORMAT = "j M Y, H:i:s"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
MONTH_DAY_FORMAT = "j F"
YEAR_MONTH_FORMAT = "F Y"
