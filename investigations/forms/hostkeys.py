"""Trusting a host's key."""

from django import forms


class HostKeyTrustForm(forms.Form):
    fingerprint = forms.CharField()
