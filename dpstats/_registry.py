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

from ._constraints import Constraint, Delta
from .accounting.relation import Relation

__all__ = ["FAMILIES", "Cases", "Declaration", "Example", "declare", "declarations", "outer"]

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
    blocks); ``audit`` — ``(neighbours pair, event, runs)`` for an empirical audit (a lower confidence bound on ε
    below the claim); ``tags``: further tests that take it (``"units"``: the privacy-unit tests run it with and
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
    audit: tuple | None = None
    tags: frozenset[str] = frozenset()


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
    not differentially private (SN: it warns, and an accountant refuses it)."""

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
        checked = {n: c for n, c in parameters.items() if c.checks}
        finishing = {n: c for n, c in checked.items() if hasattr(c, "finish")}

        @functools.wraps(function)
        def release(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as err:
                raise TypeError(f"{function.__name__}(): {err}") from None
            bound.apply_defaults()
            arguments = bound.arguments
            for parameter, constraint in checked.items():
                arguments[parameter] = constraint.check(arguments[parameter], parameter)
            for parameter, constraint in finishing.items():
                constraint.finish(arguments, parameter)
            for rule in rules:
                rule(arguments)
            return function(*bound.args, **bound.kwargs)

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
        )
        release.declaration = declaration
        release.unchecked = function  # for a caller that has checked every argument already (validate once)
        _TABLE[declaration.name] = declaration
        return release

    return decorate


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
