"""A real OpenID Connect provider for the SSO tests: django-oidc-provider in a Django project of its own.

It runs in its own process with its own SQLite database (``server.py`` starts it), issues RS256-signed ID tokens
through the authorization-code flow, publishes its discovery document and JWKS, and logs users in through an HTML
form. A user's ``groups`` claim is read from a JSON file at each userinfo request, so a test changes a user's
groups by rewriting that file.
"""
