"""The API server's static checks of a device selector: its types and its estimated cost.

k8s.io/dynamic-resource-allocation/cel (v1.35) ``CompileCELExpression`` type-checks a
selector with cel-go's checker against the DRA environment (``device`` an object with
``driver`` a string, ``attributes`` a map of domain to a map of name to dyn, ``capacity`` a
map of domain to a map of name to Quantity; ``newCompiler``), refuses one that is not boolean
("must evaluate to bool or the unknown type, not ..."), and estimates its cost
(``env.EstimateCost`` with the Kubernetes size estimator), which validation compares with
``CELSelectorExpressionMaxCost``. The CEL package that evaluates selectors
(common-expression-language) has neither a checker nor a cost estimator, so this module
checks the expression's syntax tree, as cel-python's parser (the cel-spec grammar) gives it:

- **types**, as cel-go's checker infers them: a field ``device`` has not, an operator or
  function applied to types none of its overloads takes (``device.attributes["x"].y + 1 ==
  "a"``: ``dyn + int`` is ``int``, and ``int == string`` has no overload), a condition or a
  result that is not boolean, an undeclared variable. ``dyn`` (an attribute's value) takes
  every overload; a function this module does not know (a Kubernetes library beyond
  quantity and semver) is ``dyn`` too, so the checker refuses only what it can show wrong.
- **cost**, an upper estimate in cel-go's units: one per call, select and index; a
  comprehension costs its range's size (the DRA maps' declared maximum, 32 entries, or the
  list literal's length) times its step. It agrees with cel-go where the cost is dominated
  by nested comprehensions (what can exceed the limit in this environment); it is not
  cel-go's exact figure.

An expression nested deeper than Python's stack allows (hundreds of levels, such as a chain
of several hundred ``||``, which cel-go accepts) is not checked: evaluation judges it.
"""

from __future__ import annotations

from functools import lru_cache

import lark

__all__ = ["MAX_COST", "SelectorCheckError", "check_selector"]

# resourceapi.CELSelectorExpressionMaxCost
MAX_COST = 1_000_000
# resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice: the declared size of the
# attributes and capacity maps (domains, and names per domain)
_MAP_SIZE = 32

DYN, BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL = (
    "dyn",
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "null_type",
)
QUANTITY, SEMVER, DEVICE = "kubernetes.Quantity", "kubernetes.Semver", "kubernetes.DRADevice"
_NUMBERS = (INT, UINT, DOUBLE)


def _list(elem) -> tuple:
    return ("list", elem)


def _map(key, value) -> tuple:
    return ("map", key, value)


_DEVICE_FIELDS = {
    "driver": STRING,
    "attributes": _map(STRING, _map(STRING, DYN)),
    "capacity": _map(STRING, _map(STRING, QUANTITY)),
}

# receiver type (None: a global function) -> name -> (argument types, result)
_FUNCTIONS: dict[str, list[tuple[str | None, tuple, object]]] = {
    "size": [
        (None, (STRING,), INT),
        (None, (BYTES,), INT),
        (None, ("list",), INT),
        (None, ("map",), INT),
        (STRING, (), INT),
        (BYTES, (), INT),
        ("list", (), INT),
        ("map", (), INT),
    ],
    "contains": [(STRING, (STRING,), BOOL)],
    "startsWith": [(STRING, (STRING,), BOOL)],
    "endsWith": [(STRING, (STRING,), BOOL)],
    "matches": [(STRING, (STRING,), BOOL), (None, (STRING, STRING), BOOL)],
    "lowerAscii": [(STRING, (), STRING)],
    "upperAscii": [(STRING, (), STRING)],
    "trim": [(STRING, (), STRING)],
    "quantity": [(None, (STRING,), QUANTITY)],
    "isQuantity": [(None, (STRING,), BOOL)],
    "semver": [(None, (STRING,), SEMVER), (None, (STRING, BOOL), SEMVER)],
    "isSemver": [(None, (STRING,), BOOL), (None, (STRING, BOOL), BOOL)],
    "compareTo": [(QUANTITY, (QUANTITY,), INT), (SEMVER, (SEMVER,), INT)],
    "isGreaterThan": [(QUANTITY, (QUANTITY,), BOOL), (SEMVER, (SEMVER,), BOOL)],
    "isLessThan": [(QUANTITY, (QUANTITY,), BOOL), (SEMVER, (SEMVER,), BOOL)],
    "add": [(QUANTITY, (QUANTITY,), QUANTITY), (QUANTITY, (INT,), QUANTITY)],
    "sub": [(QUANTITY, (QUANTITY,), QUANTITY), (QUANTITY, (INT,), QUANTITY)],
    "asInteger": [(QUANTITY, (), INT)],
    "isInteger": [(QUANTITY, (), BOOL)],
    "asApproximateFloat": [(QUANTITY, (), DOUBLE)],
    "sign": [(QUANTITY, (), INT)],
    "major": [(SEMVER, (), INT)],
    "minor": [(SEMVER, (), INT)],
    "patch": [(SEMVER, (), INT)],
    "int": [(None, (DYN,), INT)],
    "uint": [(None, (DYN,), UINT)],
    "double": [(None, (DYN,), DOUBLE)],
    "string": [(None, (DYN,), STRING)],
    "bytes": [(None, (DYN,), BYTES)],
    "bool": [(None, (DYN,), BOOL)],
    "dyn": [(None, (DYN,), DYN)],
}

_ARITHMETIC = {
    "_+_": [
        (INT, INT, INT),
        (UINT, UINT, UINT),
        (DOUBLE, DOUBLE, DOUBLE),
        (STRING, STRING, STRING),
        (BYTES, BYTES, BYTES),
    ],
    "_-_": [(INT, INT, INT), (UINT, UINT, UINT), (DOUBLE, DOUBLE, DOUBLE)],
    "_*_": [(INT, INT, INT), (UINT, UINT, UINT), (DOUBLE, DOUBLE, DOUBLE)],
    "_/_": [(INT, INT, INT), (UINT, UINT, UINT), (DOUBLE, DOUBLE, DOUBLE)],
    "_%_": [(INT, INT, INT), (UINT, UINT, UINT)],
}
_ORDERING = ("_<_", "_<=_", "_>_", "_>=_")
_RELATIONS = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
}
_OPERATORS = {
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}
_MACROS = {"all", "exists", "exists_one", "map", "filter"}


class SelectorCheckError(Exception):
    """What the API server says of a selector it refuses (cel-go's wording); ``forbidden``
    for the cost limit (field.Forbidden), else an invalid value."""

    def __init__(self, message: str, *, forbidden: bool = False) -> None:
        super().__init__(message)
        self.forbidden = forbidden


class _Refused(Exception):
    """A check failed at ``node`` (cel-go's message; its column is not reproduced)."""

    def __init__(self, node, message: str) -> None:
        super().__init__(message)
        self.node = node


def _name(t) -> str:
    """cel-go's name of a type in its messages."""
    if isinstance(t, tuple):
        return f"{t[0]}({', '.join(_name(x) for x in t[1:])})"
    return t


def _kind(t) -> str:
    return t[0] if isinstance(t, tuple) else t


def _fits(actual, wanted) -> bool:
    """Whether a value of type ``actual`` is assignable to a parameter of type ``wanted``."""
    if actual == DYN or wanted == DYN:
        return True
    if wanted in ("list", "map"):
        return _kind(actual) == wanted
    if isinstance(actual, tuple) and isinstance(wanted, tuple) and actual[0] == wanted[0]:
        return all(_fits(a, w) for a, w in zip(actual[1:], wanted[1:], strict=True))
    return actual == wanted


def _join(a, b):
    """The type of a value that is either ``a`` or ``b`` (a list literal, a ternary)."""
    if a == b:
        return a
    return DYN


class _Checker:
    def __init__(self) -> None:
        self.scopes: list[dict[str, object]] = [{"device": DEVICE}]

    # --- walking the cel-spec grammar's tree ---
    def check(self, node) -> tuple[object, float]:
        """The type of ``node`` and its estimated cost."""
        method = getattr(self, f"_{node.data}", None)
        if method is None:
            if len(node.children) == 1 and isinstance(node.children[0], lark.Tree):
                return self.check(node.children[0])
            raise _Refused(node, f"unsupported syntax: {node.data}")
        return method(node)

    def _expr(self, node):
        if len(node.children) == 1:
            return self.check(node.children[0])
        cond, then, other = node.children
        ct, cc = self.check(cond)
        if not _fits(ct, BOOL):
            raise _Refused(
                cond, f"found no matching overload for '_?_:_' applied to '({_name(ct)}, ...)'"
            )
        tt, tc = self.check(then)
        ot, oc = self.check(other)
        return _join(tt, ot), cc + max(tc, oc)

    def _logical(self, node, op: str):
        if len(node.children) == 1:
            return self.check(node.children[0])
        left, right = node.children
        lt, lc = self.check(left)
        rt, rc = self.check(right)
        if not (_fits(lt, BOOL) and _fits(rt, BOOL)):
            raise _Refused(
                node,
                f"found no matching overload for '{op}' applied to '({_name(lt)}, {_name(rt)})'",
            )
        return BOOL, lc + rc

    def _conditionalor(self, node):
        return self._logical(node, "_||_")

    def _conditionaland(self, node):
        return self._logical(node, "_&&_")

    def _binary(self, node, table: dict[str, str]):
        if len(node.children) == 1:
            return self.check(node.children[0])
        op_node, right = node.children
        (left,) = op_node.children
        lt, lc = self.check(left)
        rt, rc = self.check(right)
        return self._operator(node, table[op_node.data], lt, rt), lc + rc + 1

    def _relation(self, node):
        return self._binary(node, _RELATIONS)

    def _addition(self, node):
        return self._binary(node, _OPERATORS)

    def _multiplication(self, node):
        return self._binary(node, _OPERATORS)

    def _operator(self, node, op: str, lt, rt):
        def refuse():
            raise _Refused(
                node,
                f"found no matching overload for '{op}' applied to '({_name(lt)}, {_name(rt)})'",
            )

        if op in ("_==_", "_!=_"):
            if not (_fits(lt, rt) or _fits(rt, lt) or NULL in (lt, rt)):
                refuse()
            return BOOL
        if op == "@in":
            if _kind(rt) in ("list", "map"):
                elem = rt[1]
            elif rt == DYN:
                return BOOL
            else:
                refuse()
            if lt != DYN and elem != DYN and not _fits(lt, elem):
                refuse()
            return BOOL
        if op in _ORDERING:
            if DYN in (lt, rt):
                return BOOL
            if lt in _NUMBERS and rt in _NUMBERS:  # cross-type numeric comparisons
                return BOOL
            if lt == rt and lt in (STRING, BYTES, BOOL):
                return BOOL
            refuse()
        if op == "_+_" and _kind(lt) == "list" and _kind(rt) == "list":
            return _join(lt, rt)
        results = {r for a, b, r in _ARITHMETIC[op] if _fits(lt, a) and _fits(rt, b)}
        if not results:
            refuse()
        return results.pop() if len(results) == 1 else DYN

    def _unary(self, node):
        if len(node.children) == 1:
            return self.check(node.children[0])
        op, operand = node.children
        t, c = self.check(operand)
        if op.data == "unary_not":
            if not _fits(t, BOOL):
                raise _Refused(
                    node, f"found no matching overload for '!_' applied to '({_name(t)})'"
                )
            return BOOL, c + 1
        if t != DYN and t not in (INT, DOUBLE):
            raise _Refused(node, f"found no matching overload for '-_' applied to '({_name(t)})'")
        return t, c + 1

    def _member_dot(self, node):
        target, field = node.children
        tt, tc = self.check(target)
        return self._select(node, tt, str(field)), tc + 1

    def _select(self, node, t, field: str):
        if t == DEVICE:
            if field not in _DEVICE_FIELDS:
                raise _Refused(node, f"undefined field '{field}'")
            return _DEVICE_FIELDS[field]
        if t == DYN:
            return DYN
        if _kind(t) == "map" and t[1] in (STRING, DYN):
            return t[2]
        raise _Refused(node, f"type '{_name(t)}' does not support field selection")

    def _member_index(self, node):
        target, index = node.children
        tt, tc = self.check(target)
        it, ic = self.check(index)
        if tt == DYN:
            return DYN, tc + ic + 1
        if _kind(tt) == "list" and _fits(it, INT):
            return tt[1], tc + ic + 1
        if _kind(tt) == "map" and _fits(it, tt[1]):
            return tt[2], tc + ic + 1
        raise _Refused(
            node, f"found no matching overload for '_[_]' applied to '({_name(tt)}, {_name(it)})'"
        )

    def _args(self, children: list) -> list:
        """The arguments of a call or literal: its optional exprlist's (or mapinits')."""
        return list(children[0].children) if children else []

    def _member_dot_arg(self, node):
        target, name = node.children[:2]
        name = str(name)
        args = self._args(node.children[2:])
        if name in _MACROS and len(args) in (2, 3) and _is_ident(args[0]):
            return self._comprehension(node, target, name, args)
        if name == "bind" and _is_ident(target, "cel") and len(args) == 3 and _is_ident(args[0]):
            it, ic = self.check(args[1])
            self.scopes.append({_ident(args[0]): it})
            try:
                bt, bc = self.check(args[2])
            finally:
                self.scopes.pop()
            return bt, ic + bc
        tt, tc = self.check(target)
        typed = [self.check(a) for a in args]
        return self._call(node, name, tt, [t for t, _ in typed]), tc + sum(c for _, c in typed) + 1

    def _ident_arg(self, node):
        name = str(node.children[0])
        args = self._args(node.children[1:])
        if name == "has":
            if len(args) != 1 or _member_kind(args[0]) != "member_dot":
                raise _Refused(node, "invalid argument to has() macro")
            _, c = self.check(args[0])
            return BOOL, c
        typed = [self.check(a) for a in args]
        return self._call(node, name, None, [t for t, _ in typed]), sum(c for _, c in typed) + 1

    def _dot_ident_arg(self, node):
        return self._ident_arg(node)

    def _call(self, node, name: str, receiver, args: list):
        overloads = _FUNCTIONS.get(name)
        if overloads is None:
            return DYN  # a library this checker does not model: not refused here
        results = set()
        for on, params, result in overloads:
            if (on is None) != (receiver is None) or len(params) != len(args):
                continue
            if on is not None and not _fits(receiver, on):
                continue
            if all(_fits(a, p) for a, p in zip(args, params, strict=True)):
                results.add(result)
        if not results:
            shown = ", ".join(_name(a) for a in args)
            on = f"{_name(receiver)}." if receiver is not None else ""
            raise _Refused(
                node, f"found no matching overload for '{name}' applied to '{on}({shown})'"
            )
        return results.pop() if len(results) == 1 else DYN

    def _comprehension(self, node, target, macro: str, args: list):
        rt, rc = self.check(target)
        if _kind(rt) == "list":
            var_type, size = rt[1], _list_size(target)
        elif _kind(rt) == "map":
            var_type, size = rt[1], _MAP_SIZE
        elif rt == DYN:
            var_type, size = DYN, _MAP_SIZE
        else:
            raise _Refused(
                node,
                f"expression of type '{_name(rt)}' cannot be range of a comprehension (must be list, map, or dynamic)",
            )
        self.scopes.append({_ident(args[0]): var_type})
        try:
            typed = [self.check(a) for a in args[1:]]
        finally:
            self.scopes.pop()
        step = sum(c for _, c in typed) + 2
        cost = rc + size * step
        if macro in ("all", "exists", "exists_one", "filter") or len(args) == 3:
            pt = typed[0][0]
            if not _fits(pt, BOOL):
                raise _Refused(
                    args[1],
                    f"found no matching overload for '_&&_' applied to '(bool, {_name(pt)})'",
                )
        if macro == "map":
            return _list(typed[-1][0]), cost
        if macro == "filter":
            return _list(var_type), cost
        return BOOL, cost

    def _primary(self, node):
        return self.check(node.children[0])

    def _member(self, node):
        return self.check(node.children[0])

    def _paren_expr(self, node):
        return self.check(node.children[0])

    def _ident(self, node):
        name = str(node.children[0])
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name], 1
        raise _Refused(node, f"undeclared reference to '{name}' (in container '')")

    def _dot_ident(self, node):
        return self._ident(node)

    def _literal(self, node):
        token = node.children[0]
        kind = {
            "INT_LIT": INT,
            "UINT_LIT": UINT,
            "FLOAT_LIT": DOUBLE,
            "STRING_LIT": STRING,
            "MLSTRING_LIT": STRING,
            "BYTES_LIT": BYTES,
            "BOOL_LIT": BOOL,
            "NULL_LIT": NULL,
        }[token.type]
        return kind, 0

    def _list_lit(self, node):
        items = self._args(node.children)
        typed = [self.check(i) for i in items]
        elem = typed[0][0] if typed else DYN
        for t, _ in typed[1:]:
            elem = _join(elem, t)
        return _list(elem), sum(c for _, c in typed) + 1

    def _map_lit(self, node):
        items = self._args(node.children)
        typed = [self.check(i) for i in items]
        keys, values = typed[0::2], typed[1::2]
        key = keys[0][0] if keys else DYN
        value = values[0][0] if values else DYN
        for t, _ in keys[1:]:
            key = _join(key, t)
        for t, _ in values[1:]:
            value = _join(value, t)
        return _map(key, value), sum(c for _, c in typed) + 1

    def _member_object(self, node):
        raise _Refused(node, "message construction is not available in this environment")


def _unwrap(node):
    """The innermost node of a chain of single-child wrappers (expr -> ... -> member)."""
    while isinstance(node, lark.Tree) and node.data not in ("ident", "literal"):
        present = [c for c in node.children if c is not None]
        if len(present) != 1 or not isinstance(present[0], lark.Tree):
            break
        node = present[0]
    return node


def _member_kind(node) -> str:
    inner = _unwrap(node)
    return inner.data if isinstance(inner, lark.Tree) else ""


def _is_ident(node, name: str | None = None) -> bool:
    inner = _unwrap(node)
    return (
        isinstance(inner, lark.Tree)
        and inner.data == "ident"
        and (name is None or str(inner.children[0]) == name)
    )


def _ident(node) -> str:
    return str(_unwrap(node).children[0])


def _list_size(node) -> int:
    inner = _unwrap(node)
    if isinstance(inner, lark.Tree) and inner.data == "list_lit":
        return len(inner.children[0].children) if inner.children else 0
    return _MAP_SIZE


_PARSER = None  # celpy's CELParser, built on first use (its import costs ~0.5 s)


@lru_cache(maxsize=4096)
def check_selector(expression: str) -> None:
    """Raise SelectorCheckError with the API server's message when it would refuse the
    selector for its types or its cost; syntax is the compiler's (cel.compile_selector)."""
    from celpy.celparser import CELParseError, CELParser

    global _PARSER
    if _PARSER is None:
        _PARSER = CELParser()
    try:
        tree = _PARSER.parse(expression)
    except CELParseError:
        return  # a syntax error: the compiler names it
    try:
        result, cost = _Checker().check(tree)
    except _Refused as exc:
        raise SelectorCheckError(f"compilation failed: ERROR: <input>: {exc}") from None
    except RecursionError:
        return  # nested past Python's stack: not checked (long || chains are valid CEL)
    if result not in (BOOL, DYN):
        raise SelectorCheckError(f"must evaluate to bool or the unknown type, not {_name(result)}")
    if cost > MAX_COST:
        raise SelectorCheckError("too complex, exceeds cost limit", forbidden=True)
