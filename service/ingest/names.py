"""Names and labels as the API server validates them (apimachinery pkg/util/validation and
pkg/api/validation): what it would refuse to store, a snapshot refuses too (422 naming the
field), so no string a cluster could not hold reaches the database."""

from __future__ import annotations

import functools
import re

from service.ingest.errors import FieldError

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def _pattern_error(value: str, longest: int, pattern: re.Pattern, wanted: str) -> str | None:
    """Why ``value`` is not a name of at most ``longest`` characters matching ``pattern``
    (``wanted`` says what a match looks like), or None: the length first, as upstream."""
    if len(value) > longest:
        return f"must be no more than {longest} characters"
    if not pattern.fullmatch(value):
        return wanted
    return None


_DNS1123_LABEL_WANTED = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
    "or '-', and must start and end with an alphanumeric character"
)


@functools.lru_cache(maxsize=1 << 16)
def dns1123_label(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (IsDNS1123Label), or None."""
    return _pattern_error(value, DNS1123_LABEL_MAX, _DNS1123_LABEL, _DNS1123_LABEL_WANTED)


_DNS1123_SUBDOMAIN_WANTED = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character"
)


def dns1123_subdomain(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain (IsDNS1123Subdomain), or None."""
    return _pattern_error(
        value, DNS1123_SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN, _DNS1123_SUBDOMAIN_WANTED
    )


_DNS1035_LABEL_WANTED = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)


def dns1035_label(value: str) -> str | None:
    """Why ``value`` is not a DNS-1035 label (IsDNS1035Label: Service names), or None."""
    return _pattern_error(value, DNS1123_LABEL_MAX, _DNS1035_LABEL, _DNS1035_LABEL_WANTED)


@functools.lru_cache(maxsize=1 << 16)
def qualified_name(value: str) -> str | None:
    """Why ``value`` is not a label key (IsQualifiedName: [prefix/]name), or None."""
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return "prefix part must be non-empty"
    if prefix and "/" in prefix:
        return "a qualified name must have at most one '/'"
    if prefix and (why := dns1123_subdomain(prefix)):
        return f"prefix part {why}"
    if not name:
        return "name part must be non-empty"
    if len(name) > QUALIFIED_NAME_MAX:
        return f"name part must be no more than {QUALIFIED_NAME_MAX} characters"
    if not _QUALIFIED_NAME.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return None


@functools.lru_cache(maxsize=1 << 16)
def label_value(value: str) -> str | None:
    """Why ``value`` is not a label value (IsValidLabelValue: empty allowed), or None."""
    if len(value) > LABEL_VALUE_MAX:
        return f"must be no more than {LABEL_VALUE_MAX} characters"
    if value and not _QUALIFIED_NAME.fullmatch(value):
        return (
            "a valid label value must be empty or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character"
        )
    return None


def label_errors(labels: dict[str, str] | None, path: str) -> list[FieldError]:
    """ValidateLabels: every key a qualified name, every value a label value."""
    errors = []
    for key, value in (labels or {}).items():
        if why := qualified_name(key):
            errors.append(FieldError(f"{path}[{key[:80]!r}]", f"invalid label key: {why}"))
        elif why := label_value(value):
            errors.append(FieldError(f"{path}.{key}", f"invalid label value: {why}"))
    return errors


# How the API server validates each kind's metadata.name (ValidateXName).
_NAME_RULES = {"Namespace": dns1123_label, "Service": dns1035_label}


def metadata_errors(kind: str, metadata, path: str, *, namespaced: bool) -> list[FieldError]:
    """ValidateObjectMeta's name, namespace and labels checks for one object's metadata."""
    errors = []
    rule = _NAME_RULES.get(kind, dns1123_subdomain)
    if metadata.name and (why := rule(metadata.name)):
        errors.append(FieldError(f"{path}.metadata.name", why))
    if namespaced and metadata.namespace and (why := dns1123_label(metadata.namespace)):
        errors.append(FieldError(f"{path}.metadata.namespace", why))
    errors.extend(label_errors(metadata.labels, f"{path}.metadata.labels"))
    return errors
