"""The table of declared releases, and :func:`declare`, the decorator that puts a release in it.

Every public release is declared once, next to its code::

    @declare(
        family="descriptive",
        statistic="the mean of bounded values",
        data={"x": Data("values")},
        parameters={"epsilon": Epsilon(), "delta": Delta(), "clip": Flag(), ...},
        relations=("row", "unit"),
        engines=("numpy", "dask"),
        cases="dpstats.descriptive._cases:mean",
    )
    def mean(x, epsilon, delta=0.0, *, bounds, ...): ...

The decorator returns the release's entry point: it binds the call to the signature, checks every declared
parameter once (:mod:`dpstats._constraints`; the body receives the normalised values and trusts them), runs the
declaration's cross-parameter ``rules``, then runs the body. The declaration is what the tests, the API pages, the
bad-input battery, the sensitivity checker, the audits and the Dask agreement read (:mod:`dpstats.registry`):
adding a release is this declaration plus its test cases (``cases``, a ``"module:function"`` imported only when a
test asks for it, so ``import dpstats`` never loads them).

**A preview.** ``preview=`` is a function ``preview(epsilon, delta, **public)`` from a planned call's public
arguments (its bounds, the number of rows n, or of units and ``max_rows``, ...) to a
:class:`dpstats._release.Preview`: the noise the call will add and its 95 % error in the units of its result (for
an exponential mechanism, the utility gap that holds with probability 0.95), and its privacy events — computed
with the calibration the release uses, before any data exists. It may be given as ``"module:function"`` (as
``cases``), imported when a preview is asked for: a preview reads its family's public planning helpers, and the
family module then need not import it (no import circle). ``dps.preview`` calls it through
:meth:`Declaration.previewed`, which checks ε, δ and every public argument the release declares with its
declared constraint first.

**One signature.** A declaration checks the release's signature when it is made: the data parameters first, then
the statistic's own positional arguments (``own``: ``q``, ``k``, ``Y``), then ``epsilon``, then ``delta`` (both
positional or keyword), then keyword-only options. δ's default follows one rule for every release:
:attr:`dpstats._constraints.Delta.default` (0 unless the release needs δ > 0).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import import_module

from ._constraints import Constraint, Delta, RandomSource
from ._validation import GENERATED
from .accounting.relation import Relation

__all__ = ["FAMILIES", "Audit", "Cases", "Declaration", "Example", "declare", "declarations", "outer"]

#: The families, bottom first: a family may use the releases of the families before it (a private quantile of row
#: norms bounds a PCA; an interval releases a private variance). Each is the subpackage ``dpstats.<family>``.
FAMILIES = ("descriptive", "decomposition", "linear_model", "hypothesis", "inference")

#: The engines a release can run on.
ENGINES = ("numpy", "dask")

#: name -> Declaration, in the order of declaration.
_TABLE: dict[str, Declaration] = {}


@dataclass(frozen=True)
class Example:
    """One call of a release on small data, for the tests that read the registry.

    The call is ``function(*positional, <keywords>=..., **kwargs, rng=..., accountant=...)`` where ``data()``
    returns ``positional + keyword values``: the first elements are the release's positional data (``x``; ``X, y``;
    ``X, Y``), the last ``len(keywords)`` are passed by the names in ``keywords`` (``by``, ``privacy_unit``: data
    that neighbouring datasets change too). ``kwargs``: every other argument but ``rng`` and ``accountant``
    (``epsilon``, ``delta``, ``q``/``k`` by name, options). ``output`` picks what is compared from the result (a
    histogram's counts: ``lambda r: r[0]``).

    What each test takes from it: ``seed`` — the release for this seed is recorded (the golden test: bitwise
    unchanged); ``neighbours()`` — worst-case pairs of data tuples of the release's relation (the sensitivity
    checker, noise frozen); ``dask`` — the same release on dask versions of the data (chunks cutting the public
    blocks); ``audit`` — an :class:`Audit` (a lower confidence bound on ε below the claim, and an under-noised
    variant flagged above it); ``tags``: further tests that take it (``"units"``: the privacy-unit tests run it with and
    without its unit, sorted, and in a parallel block). The label names the example everywhere (the golden file's
    keys)."""

    label: str
    data: Callable
    kwargs: Mapping[str, object] = field(default_factory=dict)
    keywords: tuple[str, ...] = ()
    output: Callable | None = None
    seed: int | None = None
    neighbours: Callable | None = None
    dask: bool = False
    audit: Audit | None = None
    tags: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Audit:
    """An empirical audit of an :class:`Example` (:func:`dpstats.audit.audit`): the release is run ``runs`` times on
    each dataset of ``pair()`` (two data tuples: neighbours of the release's relation), and the event ``event()``
    (a zero-argument factory of the predicate on the output: a threshold computed from the data) turns the runs
    into a lower confidence bound on ε, which must stay at or below the example's ε. The under-noised variant — the
    same call with ``broken`` (keyword changes: by default the noise of ``under`` times ε claimed as ε; for a
    unit-level release, the same call without its unit), or under ``patch`` — must be flagged above it: that shows
    the event has the power to catch a calibration error. ``patch``: a ``patch(monkeypatch)`` that mis-declares the
    release's sensitivity where it computes it (halved, as :attr:`Cases.misdeclared`'s patches); the variant is then
    the same call under it (with ``broken``'s changes, if any). ``delta``: the audit's δ; ``seeds``: the clean and
    the broken runs'."""

    pair: Callable
    event: Callable
    runs: int
    seeds: tuple[int, int]
    delta: float = 0.0
    broken: Mapping[str, object] | None = None
    under: float = 8.0
    patch: Callable | None = None

    def broken_changes(self, kwargs: Mapping[str, object]) -> dict:
        """The keyword changes of the under-noised variant of a call with ``kwargs``."""
        if self.broken is not None:
            return dict(self.broken)
        if self.patch is not None:
            return {}
        return {"epsilon": self.under * kwargs["epsilon"]}


@dataclass(frozen=True)
class Cases:
    """A release's test cases (its test factories).

    ``examples``: calls on small data (golden, sensitivity, Dask, audit: see :class:`Example`). ``battery``: the
    valid base calls of the bad-input battery, each ``(data, kwargs)`` (the battery replaces one argument at a time
    by the values its declared constraint refuses, and each data argument by hostile inputs of its kind).
    ``misdeclared``: ``(label, patch)`` — ``patch(monkeypatch)`` halves the declared sensitivity where the release
    computes it, and the sensitivity checker must then flag the example ``label``."""

    examples: tuple[Example, ...] = ()
    battery: tuple[tuple[tuple, dict], ...] = ()
    misdeclared: tuple[tuple[str, Callable], ...] = ()


@dataclass(frozen=True)
class Declaration:
    """One declared release (see the module docstring).

    ``name``: the public name (``dps.<name>``); ``family``: one of :data:`FAMILIES`; ``statistic``: what is
    released, in a line; ``function``: the entry point; ``data``: the data parameters and their kinds;
    ``own``: the statistic's own positional parameters; ``parameters``: the declared constraint of every other
    parameter; ``relations``: the neighbouring relations it supports; ``engines``: where it runs; ``rules``:
    cross-parameter checks ``rule(arguments)`` run after the constraints; ``private``: False for a release that is
    not differentially private (SN: it warns, and an accountant refuses it); ``preview``: the noise and error of a
    planned call from its public arguments (module docstring, "A preview"), or None."""

    name: str
    family: str
    statistic: str
    function: Callable
    data: Mapping[str, Constraint]
    own: tuple[str, ...]
    parameters: Mapping[str, Constraint]
    relations: frozenset[Relation]
    engines: frozenset[str]
    rules: tuple[Callable, ...] = ()
    cases_path: str | None = None
    private: bool = True
    module: str = ""
    kind: str = "release"
    extra: Mapping[str, object] = field(default_factory=dict)
    preview: Callable | str | None = None

    @property
    def delta(self) -> Delta | None:
        """The declared constraint of δ (None for a release without one)."""
        constraint = self.parameters.get("delta")
        return constraint if isinstance(constraint, Delta) else None

    def checked(self, options: Mapping[str, object]) -> dict:
        """``options`` (keyword arguments of this release handed on by another: ``pca``'s ``**options``) checked by
        their declared constraints, once; a name this release does not declare raises."""
        found = {}
        for name, value in options.items():
            if name not in self.parameters:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {name!r}")
            constraint = self.parameters[name]
            found[name] = constraint.check(value, name) if constraint.checks else value
        return found

    def previewer(self) -> Callable | None:
        """The preview function (imported now when declared as ``"module:function"``), or None."""
        if isinstance(self.preview, str):
            module, _, name = self.preview.partition(":")
            return getattr(import_module(module), name)
        return self.preview

    def previewed(self, epsilon, delta=None, **public):
        """The :class:`~dpstats._release.Preview` of a planned call (module docstring, "A preview"): ε, δ (None:
        the release's default, the method's where it depends on one) and every public argument the release
        declares (``bounds``, ``k``, ``method``, ...) checked with its declared constraint, then the preview run on
        them (``clip`` is checked and dropped: it changes no noise). An argument only the preview takes (``n``,
        ``units``, ``d``) is checked by the preview."""
        from .exceptions import ParameterError

        function = self.previewer()
        if function is None:
            raise ParameterError(f"{self.name} declares no preview (its ledger entry states its noise)")
        epsilon = self.parameters["epsilon"].check(epsilon, "epsilon")
        checked = {}
        for name, value in public.items():
            constraint = self.parameters.get(name)
            if constraint is not None and constraint.checks and value is not None:
                value = constraint.check(value, name)
            checked[name] = value
        takes = inspect.signature(function).parameters
        if "clip" in checked and "clip" not in takes:
            checked.pop("clip")  # checked as the call checks it; clipping to public bounds changes no noise
        try:
            inspect.signature(function).bind(epsilon, delta, **checked)
        except TypeError:
            bound = getattr(function, "keywords", {})  # a functools.partial's own (the declaration's) keywords
            names = [n for n, p in takes.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and n not in bound]
            unknown = sorted(set(checked) - set(names))
            raise ParameterError(
                f"{self.name}'s preview takes {', '.join(names)} (the call's public arguments and the data's public "
                f"size); got {', '.join(unknown) or 'arguments it cannot bind'}"
            ) from None
        return function(epsilon, self._previewed_delta(delta, checked), **checked)

    def _previewed_delta(self, delta, public: Mapping[str, object]) -> float:
        """δ of a planned call: checked by the declared constraint, its default when None (with a δ that depends
        on a method, the default and the check of that method: the one given, or the release's default)."""
        constraint = self.delta
        if constraint is None:
            return 0.0 if delta is None else delta
        if constraint.use != "method":
            return constraint.check(constraint.default if delta is None else delta, "delta")
        method = public.get(constraint.by)
        if method is None:
            method = inspect.signature(self.function).parameters[constraint.by].default
        arguments = {constraint.by: method, "delta": constraint.check(delta, "delta")}
        constraint.finish(arguments, "delta")
        return arguments["delta"]

    def cases(self) -> Cases:
        """The release's test cases (imported now: never at ``import dpstats``)."""
        if self.cases_path is None:
            return Cases()
        module, _, name = self.cases_path.partition(":")
        return getattr(import_module(module), name)()

    def run(self, example: Example, data=None, rng=None, accountant=None, **changes):
        """The release of ``example`` (on ``data`` instead of its own when given), with ``rng`` and ``accountant``;
        ``changes`` replace some of its keyword arguments (a value None removes one). An estimator is built with
        the keyword arguments, ``random_state=rng`` and ``accountant``, and fitted on the data."""
        data = example.data() if data is None else data
        positional = data[: len(data) - len(example.keywords)]
        named = dict(zip(example.keywords, data[len(positional) :], strict=True))
        kwargs = {k: v for k, v in {**example.kwargs, **named, **changes}.items() if v is not None}
        if accountant is not None:
            kwargs["accountant"] = accountant
        if self.kind == "estimator":
            fit = {k: kwargs.pop(k) for k in ("privacy_unit",) if k in kwargs}
            result = self.function(**kwargs, random_state=rng).fit(*positional, **fit)
        else:
            result = self.function(*positional, **kwargs, rng=rng)
        return example.output(result) if example.output is not None else result


def outer(wrapper: Callable) -> Callable:
    """Make ``wrapper`` (a decorator's wrapper around a declared release, e.g. a friendlier error for a common
    misuse) the release's entry point in the table; returns it."""
    declaration = replace(wrapper.__wrapped__.declaration, function=wrapper)
    wrapper.declaration = declaration
    _TABLE[declaration.name] = declaration
    return wrapper


def declarations() -> dict[str, Declaration]:
    """The declared releases so far (name -> declaration); :func:`dpstats.registry.releases` imports every family
    first."""
    return dict(_TABLE)


def declare(
    *,
    family: str,
    statistic: str,
    data: Mapping[str, Constraint],
    parameters: Mapping[str, Constraint],
    relations=(Relation.ROW, Relation.UNIT),
    engines=("numpy",),
    own: tuple[str, ...] = (),
    rules: tuple[Callable, ...] = (),
    cases: str | None = None,
    private: bool = True,
    name: str | None = None,
    preview: Callable | str | None = None,
    **extra,
):
    """Declare the decorated function as a release (see the module docstring) and return its validating entry
    point."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}; got {family!r}")
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise ValueError(f"engines must be among {ENGINES}; got {sorted(unknown)}")

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        _check_signature(function.__name__, signature, tuple(data), tuple(own), parameters)
        release = _entry_point(function, signature, parameters, rules)

        declaration = Declaration(
            name=name or function.__name__,
            family=family,
            statistic=statistic,
            function=release,
            data=dict(data),
            own=tuple(own),
            parameters=dict(parameters),
            relations=frozenset(Relation(r) for r in relations),
            engines=frozenset(engines),
            rules=tuple(rules),
            cases_path=cases,
            private=private,
            module=function.__module__,
            extra=dict(extra),
            preview=preview,
        )
        release.declaration = declaration
        release.unchecked = function  # for a caller that has checked every argument already (validate once)
        _TABLE[declaration.name] = declaration
        return release

    return decorate


def _entry_point(function: Callable, signature: inspect.Signature, parameters, rules) -> Callable:
    """The release's entry point: a function with ``function``'s own signature (Python binds the call, at no cost),
    whose body checks every declared parameter (:meth:`Constraint.check`), runs the constraints' cross-parameter
    ``finish`` and the declaration's ``rules``, and calls ``function`` with the normalised values.

    A parameter left at its default is not checked again when its constraint accepted that default unchanged when
    the release was declared (the default is public and constant: checking it at every call would only cost time);
    a random source and a constraint with a ``finish`` are always run (None means a fresh secure generator; the
    method's δ)."""
    checked = {n: c for n, c in parameters.items() if c.checks}
    namespace = {"__function": function, "__rules": tuple(rules)}
    lines, call = [], []
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            call.append(f"*{p.name}")
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            call.append(f"**{p.name}")
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            call.append(f"{p.name}={p.name}")
        else:
            call.append(p.name)
        constraint = checked.get(p.name)
        if constraint is None:
            continue
        namespace[f"__check_{p.name}"] = constraint.check
        line = f"{p.name} = __check_{p.name}({p.name}, {p.name!r})"
        if p.default is not inspect.Parameter.empty and _accepts_unchanged(constraint, p.default, p.name):
            namespace[f"__default_{p.name}"] = p.default
            line = f"if {p.name} is not __default_{p.name}: {line}"
        lines.append(line)
    finishing = [n for n, c in checked.items() if hasattr(c, "finish")]
    if finishing or rules:
        names = [p.name for p in signature.parameters.values()]
        lines.append("__arguments = {" + ", ".join(f"{n!r}: {n}" for n in names) + "}")
        for n in finishing:
            namespace[f"__finish_{n}"] = checked[n].finish
            lines += [f"__finish_{n}(__arguments, {n!r})", f"{n} = __arguments[{n!r}]"]
        lines.append("for __rule in __rules: __rule(__arguments)")
    source = (
        f"def {function.__name__}{_signature_source(signature, namespace)}:\n"
        + "".join(f"    {line}\n" for line in lines)
        + f"    return __function({', '.join(call)})\n"
    )
    exec(compile(source, f"{GENERATED}{function.__name__}>", "exec"), namespace)  # noqa: S102
    release = functools.wraps(function)(namespace[function.__name__])
    release.__signature__ = signature
    return release


def _accepts_unchanged(constraint: Constraint, default, name: str) -> bool:
    """Whether ``constraint`` accepts ``default`` and returns it as it is (then a call that leaves the parameter at
    its default needs no check); never for a random source (None is a fresh generator at each call) or a constraint
    that finishes across parameters."""
    if isinstance(constraint, RandomSource) or hasattr(constraint, "finish"):
        return False
    try:
        return constraint.check(default, name) is default
    except Exception:  # noqa: BLE001 (a default the constraint refuses is checked, and refused, at every call)
        return False


def _signature_source(signature: inspect.Signature, namespace: dict) -> str:
    """``signature`` as source text, every default a name bound in ``namespace`` (no annotations)."""
    parts, star = [], False
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
            star = True
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            parts.append(f"**{p.name}")
            continue
        if p.default is inspect.Parameter.empty:
            parts.append(p.name)
        else:
            namespace[f"__signature_default_{p.name}"] = p.default
            parts.append(f"{p.name}=__signature_default_{p.name}")
    return "(" + ", ".join(parts) + ")"


def _check_signature(name: str, signature: inspect.Signature, data: tuple, own: tuple, parameters) -> None:
    """The one signature (module docstring): data, own arguments, ``epsilon``, ``delta`` positional-or-keyword in
    that order (δ with the default of :attr:`Delta.default`), every other parameter keyword-only and declared."""
    positional = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    expected = [*data, *own, "epsilon", "delta"]
    if positional != expected:
        raise TypeError(f"{name}: positional parameters must be {expected}; got {positional}")
    delta = parameters.get("delta")
    default = signature.parameters["delta"].default
    if not isinstance(delta, Delta) or default != delta.default:
        raise TypeError(f"{name}: delta must be declared with Delta() and default to its rule; got {default!r}")
    keywords = [p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    undeclared = [k for k in [*own, "epsilon", *keywords] if k not in parameters]
    if undeclared:
        raise TypeError(f"{name}: every parameter must be declared; not declared: {undeclared}")
