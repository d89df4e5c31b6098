"""scikit-learn estimators around dpstats' mechanisms.

:class:`DPPCA` (:func:`dpstats.pca`), :class:`DPCCA` (:func:`dpstats.cca`),
:class:`DPLogisticRegression` (:func:`dpstats.logistic_regression`),
:class:`DPLinearSVC` (:func:`dpstats.svm`) and :class:`DPLinearRegression`
(:func:`dpstats.linear_regression`) follow scikit-learn's conventions:
hyper-parameters in ``__init__``, ``fit`` returns ``self``, fitted attributes end
with ``_``, ``get_params``/``set_params``/``clone`` work, and the estimators run
inside :class:`~sklearn.pipeline.Pipeline` and
:class:`~sklearn.model_selection.GridSearchCV`.

Privacy notes that apply to every estimator here:

* Each call to ``fit`` is one release of the wrapped mechanism and spends its
  (ε, δ). **Tuning hyper-parameters on private data spends budget**:
  ``GridSearchCV`` fits once per candidate and fold, plus a refit, and the
  model selection itself reads the data (its choice is not covered by the
  mechanism's guarantee; CMS 2011, Section 5, gives a private tuning method).
  Tune on public or held-out data, or account for every fit.
* ``accountant``: clones made by scikit-learn (``clone``, ``GridSearchCV``,
  ``cross_val_score``) *share* the accountant object instead of copying it, so
  every fit of every clone is charged to the same budget. With ``n_jobs > 1``
  the estimators are pickled and sent to worker processes: an in-memory
  accountant refuses that at once (a worker's charges would never reach it);
  an accountant with a ``ledger_file`` goes with them and every worker charges
  the one shared ledger.
* Fitted attributes are releases too. Each is either the noisy output, or a
  function of public parameters and shapes (``n_features_in_``,
  ``n_components_``, ``classes_`` from the ``classes`` parameter); no solver
  diagnostic computed from the data (such as an iteration count) is exposed.
  ``tests/test_estimators.py`` fits every estimator on neighbouring datasets
  with several seeds and checks this for every public attribute.
* ``random_state``: None (a cryptographically secure source, fresh for every fit), an int or a
  :class:`numpy.random.Generator`. A fixed int makes every fit draw the *same*
  noise, which is fine for reproducible experiments but composes badly: do not
  release several fits made with the same seed. A Generator is used as it is
  (successive fits draw fresh noise); clones get independent generators, and
  such an estimator refuses to be pickled (its generator's state would reveal
  the noise).
* Privacy units: ``fit(X, y, privacy_unit=ids)`` with the ``max_rows`` parameter makes the person the unit
  (neighbours differ in all rows of one person, each bounded to ``max_rows`` rows; see :func:`dpstats.mean`,
  "Privacy units"). ``ids`` may name a column of a DataFrame ``X``. In a ``Pipeline`` or ``GridSearchCV`` it is
  routed as metadata: enable scikit-learn's metadata routing and call ``set_fit_request(privacy_unit=True)``
  (clones keep the request).
* Data must satisfy the mechanisms' row-norm bound (‖x_i‖₂ <= 1); ``clip=True``
  rescales longer rows (a data-independent map) instead of raising. For data of
  unknown scale, ``norm_bound="private"`` (DPPCA, DPCCA) spends a share of ε on
  a private bound (a quantile of the row norms) and clips to it, charged with
  the fit; a public ``norm_bound=R`` divides the rows by R.
* Pre-processing fitted on the private data inside a pipeline (e.g.
  ``StandardScaler``) reads the data without privacy: it is not covered.

scikit-learn's ``check_estimator`` (``tests/test_estimators.py`` runs it on every
estimator, and on DPPCA with each mechanism "ag", "ppm", "ppca"):

* The instances under check use ``clip=True``: the checks' synthetic data have
  rows with norm > 1, which the mechanisms refuse by default (see above). The
  classifiers get ``classes=[0, 1]``. No other setting is changed (default
  ε = 1); the checks fix ``random_state``.
* Expected failures, each for a privacy reason (listed with the reason in the
  test): the classifier checks that fit labels other than the declared
  ``classes`` (the classes are a public parameter, never read from y), and
  ``check_non_transformer_estimators_n_iter`` (an iteration count computed
  from the data would be a release without noise).
"""

from __future__ import annotations

import copy
import math

import numpy as np
from scipy.special import expit
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from ._engine import Matrix, as_array, check_row_norms, engine_of, take_units
from ._engine.kinds import is_frame
from ._engine.tables import check_numeric_columns
from ._engine.units import unit_column
from ._validation import check_flag, check_int, check_numeric_dtype
from .accounting import DEFAULT_DELTA
from .decomposition._cca import cca
from .decomposition._pca import pca
from .exceptions import DataValidationError, ParameterError, PrivacyError
from .inference._estimate import check_level
from .linear_model._erm import DEFAULT_MAX_ITER, DEFAULT_TOL, LOGISTIC, fit_weights, huber
from .linear_model._linear_regression import linear_regression
from .noise.random import check_rng, independent_generator
from .preprocessing import RADIUS_SHARE

__all__ = ["DPCCA", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "DPPCA"]


class _SharedAccountantMixin:
    """The estimators' privacy-aware cloning and pickling.

    * ``accountant`` is shared by clones (so all their fits are charged), not copied.
    * A ``numpy.random.Generator`` in ``random_state`` is not copied either: a copy would draw the same noise as
      its original, and two fits on neighbouring data would then differ by the noise-free difference of their
      statistics. Each clone gets an independent generator instead (:func:`independent_generator`).
    * An estimator whose ``random_state`` is a Generator refuses to be pickled: the generator's state (the AES key
      and counter of the secure default) would let anyone who reads the pickle recompute the noise it drew.
    """

    def __sklearn_clone__(self):
        params = self.get_params(deep=False)
        accountant = params.pop("accountant")
        random_state = params.pop("random_state")
        if isinstance(random_state, np.random.Generator):
            random_state = independent_generator(random_state)
        twin = type(self)(
            accountant=accountant, random_state=random_state, **{k: clone(v, safe=False) for k, v in params.items()}
        )
        if hasattr(self, "_metadata_request"):  # set_fit_request(privacy_unit=True) survives cloning, as in clone()
            shared = {id(self): twin, id(accountant): accountant}  # the requests name their owner: never copied
            twin._metadata_request = copy.deepcopy(self._metadata_request, memo=shared)
        return twin

    def __getstate__(self):
        if isinstance(getattr(self, "random_state", None), np.random.Generator):
            raise PrivacyError(
                f"this {type(self).__name__} holds a numpy Generator in random_state, whose state would reveal the "
                "noise it drew to anyone reading the pickle; set_params(random_state=None) (or an int seed, for "
                "reproducible runs that are not secure) before pickling, and use n_jobs=1 for parallel tools"
            )
        return super().__getstate__()


def _unit_input(X, privacy_unit):
    """``(X, privacy_unit)`` with a privacy unit given as a column name of the DataFrame ``X`` taken out of it
    (the column is only the unit, never data)."""
    if isinstance(privacy_unit, str):
        return unit_column(X, privacy_unit, "X")
    return X, privacy_unit


def _unit_options(privacy_unit, max_rows) -> dict:
    """The mechanism's privacy-unit keywords (none at all without a unit and without ``max_rows``, so that a
    ``max_rows`` set alone is refused by the mechanism with a clear error)."""
    if privacy_unit is None and max_rows is None:
        return {}
    return {"privacy_unit": privacy_unit, "max_rows": max_rows}


def _sklearn(name: str, check, *args, **kwargs):
    """``check(*args, **kwargs)``, one of scikit-learn's validations, with its ValueError raised again as a
    :class:`~dpstats.exceptions.DataValidationError` naming the input ``name`` (scikit-learn's message kept, so its
    estimator checks still recognise it)."""
    try:
        return check(*args, **kwargs)
    except ValueError as err:
        if isinstance(err, (DataValidationError, ParameterError)):
            raise
        raise DataValidationError(f"{name}: {err}") from err


def _numeric(X, name: str) -> None:
    """The library's rule for numeric data (:func:`dpstats._validation.check_numeric_dtype`), on what an estimator
    is given: a table's columns, or an array-like's dtype. An object array passes (scikit-learn's estimators take
    object arrays of numbers) unless it holds strings, which are never parsed as numbers."""
    if is_frame(X) or type(X).__name__ == "Series":
        check_numeric_columns(X, name)
        return
    dtype = getattr(X, "dtype", None)
    if dtype is None and isinstance(X, (list, tuple)):
        try:
            dtype = np.asarray(X).dtype
        except (TypeError, ValueError):
            return  # ragged: scikit-learn's validation says so
    if dtype is None:
        return
    if np.dtype(dtype).kind == "c":
        return  # scikit-learn's own refusal ("Complex data not supported"), which its estimator checks look for
    if np.dtype(dtype).kind == "O":
        if any(isinstance(v, (str, bytes)) for v in np.asarray(X, dtype=object).ravel()):
            raise DataValidationError(f"{name} must hold real numbers or booleans; got strings (they are never parsed)")
        return
    check_numeric_dtype(dtype, name)


def _fit_input(estimator, X):
    """``X`` validated as scikit-learn does (its errors as dpstats errors naming X); a dask array or DataFrame stays
    lazy (the mechanism's pass checks it), with ``n_features_in_`` (and a DataFrame's ``feature_names_in_``) set
    from its public shape and columns."""
    if not engine_of(X).LAZY:
        _numeric(X, "X")
        return _sklearn("X", validate_data, estimator, X, dtype=np.float64)
    names = getattr(X, "columns", None)
    X = as_array(X, "X", ndim=(2,))
    estimator.n_features_in_ = X.shape[1]
    if names is not None:
        estimator.feature_names_in_ = np.asarray([str(c) for c in names], dtype=object)
    return X


def _fit_matrix(estimator, X, privacy_unit) -> Matrix:
    """The rows of a fit, read once (:func:`_fit_input`, scikit-learn's validation) with their privacy units aligned
    (``max_rows`` the estimator's): the release takes them as they are (:func:`dpstats._engine.read_matrix`)."""
    X = _fit_input(estimator, X)
    X, units = take_units(X, privacy_unit, estimator.max_rows)
    return Matrix(X, None if units is None else units.aligned(X.shape[0]))


def _input(estimator, X):
    """``X`` for ``transform``/``predict``: checked against the fitted width; a dask input gives a lazy result."""
    if not engine_of(X).LAZY:
        _numeric(X, "X")
        return _sklearn("X", validate_data, estimator, X, dtype=np.float64, reset=False)
    X = as_array(X, "X", ndim=(2,))
    if X.shape[1] != estimator.n_features_in_:
        raise DataValidationError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input"
        )
    return X


class DPPCA(_SharedAccountantMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Differentially private PCA (projection onto a private top-k subspace).

    ``fit`` calls :func:`dpstats.pca` once; see it and the mechanism functions
    (:func:`dpstats.pca_ag`, :func:`dpstats.pca_ppm`, :func:`dpstats.pca_ppca`)
    for the sensitivities and the papers followed. As in those papers the
    subspace is that of the **uncentred** second-moment matrix XᵀX: no mean is
    subtracted (centering with the data's mean would not be private).

    Parameters
    ----------
    n_components : int, optional
        Dimension k of the subspace; None keeps all d (a private rotation).
    mechanism : {"ag", "ppm", "ppca", "amin", "dong", "sn"}, default "ag"
        Analyze Gauss (needs δ > 0), noisy power method, exponential mechanism
        (pure ε-DP: δ must be 0 or None), Amin et al.'s iterative
        eigenvector sampling (:func:`dpstats.amin_eigen`, pure ε-DP), Dong, Liang
        & Yi's (2022) trace-sensitive estimate (δ > 0), or SN (not private: warns,
        and an accountant refuses it).
    epsilon : float, default 1.0
        ε of the release (the private norm bound included).
    delta : float or None, default None
        δ of the release; None is the mechanism's default (1e-6 for "ag", "ppm" and "dong", 0 for the pure
        mechanisms; see :func:`dpstats.pca`).
    clip : bool, default False
        Rescale rows with norm > 1 (or > ``norm_bound``) to it instead of raising.
    norm_bound : None, float or "private", default None
        What the rows' norms are bounded by: None (1; longer rows raise unless ``clip``), a public R > 0, or
        ``"private"`` for data of unknown scale: a private 0.75-quantile of the row norms, bought with
        ``radius_share``·ε and charged with the fit (see :func:`dpstats.pca`).
    radius_share : float, default 0.1
        With ``norm_bound="private"``: the part of ε spent on the bound.
    max_rows : int, optional
        With ``fit(..., privacy_unit=ids)``: the public number of rows kept per
        unit (see :func:`dpstats.mean`, "Privacy units"); required then.
    accountant : dpstats.Accountant, optional
        Charged at every ``fit`` (shared by clones).
    random_state : None, int or numpy.random.Generator
        Source of noise (see the module docstring).

    Attributes
    ----------
    components_ : numpy.ndarray, shape (n_components_, n_features_in_)
        Orthonormal rows spanning the private subspace.
    n_components_ : int
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.estimators import DPPCA
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 5)) / 3
    >>> DPPCA(2, epsilon=1.0, random_state=0).fit_transform(X).shape
    (500, 2)
    """

    def __init__(
        self,
        n_components=None,
        *,
        mechanism="ag",
        epsilon=1.0,
        delta=None,
        clip=False,
        norm_bound=None,
        radius_share=RADIUS_SHARE,
        max_rows=None,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.clip = clip
        self.norm_bound = norm_bound
        self.radius_share = radius_share
        self.max_rows = max_rows
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y=None, privacy_unit=None):
        """Fit the private subspace; ``y`` is ignored. ``privacy_unit``: one identifier per row (or a column name
        of the DataFrame ``X``), with the ``max_rows`` parameter (routed as metadata in a Pipeline or a
        GridSearchCV). Returns ``self``."""
        X, privacy_unit = _unit_input(X, privacy_unit)
        data = _fit_matrix(self, X, privacy_unit)
        d = data.X.shape[1]
        k = d if self.n_components is None else check_int(self.n_components, "n_components", high=d)
        V = pca(
            data,
            k,
            mechanism=self.mechanism,
            epsilon=self.epsilon,
            delta=self.delta,
            norm_bound=self.norm_bound,
            radius_share=self.radius_share,
            rng=check_rng(self.random_state, "random_state"),
            accountant=self.accountant,
            clip=self.clip,
        )
        self.components_ = V.T
        self.n_components_ = V.shape[1]
        self._n_features_out = self.n_components_  # names "dppca0", ... for get_feature_names_out
        return self

    def transform(self, X):
        """Project X on the private subspace (post-processing: no privacy cost)."""
        check_is_fitted(self)
        X = _input(self, X)
        return X @ self.components_.T

    def inverse_transform(self, X):
        """Map projections back to the original space."""
        check_is_fitted(self)
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_components_:
            raise ValueError(f"X must have n_components_ = {self.n_components_} columns; got {X.shape[1]}")
        return X @ self.components_


class DPCCA(_SharedAccountantMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Differentially private CCA of two views (wraps :func:`dpstats.cca`).

    ``fit(X, y)`` releases the noisy joint second-moment matrix of [X, y] once
    ((ε, δ)-DP, replace-one sensitivity √2/N; see :func:`dpstats.cca`), then
    computes the canonical directions by post-processing. Every joint row
    [x_n, y_n] must have norm <= 1. No centering is done (see :func:`dpstats.cca`).

    Parameters
    ----------
    n_components : int, default 1
        Number k of canonical pairs, 1 <= k <= min(dx, dy).
    epsilon : float, default 1.0
    delta : float, default 1e-6
    calibration : {"analytic", "classic"}, default "analytic"
    ridge : float, optional
        Eigenvalue floor of the noisy blocks (default ``2σ√D``, data-independent).
    clip : bool, default False
        Rescale joint rows with norm > 1 (or > ``norm_bound``) to it instead of raising.
    norm_bound : None, float or "private", default None
        What the joint rows' norms are bounded by (see :func:`dpstats.cca`): None (1), a public R > 0, or
        ``"private"`` (a private 0.75-quantile of the norms, bought with ``radius_share``·ε).
    radius_share : float, default 0.1
        With ``norm_bound="private"``: the part of ε spent on the bound.
    max_rows : int, optional
        With ``fit(..., privacy_unit=ids)``: the public number of rows kept per
        unit (see :func:`dpstats.mean`, "Privacy units"); required then.
    accountant : dpstats.Accountant, optional
        Charged at every ``fit`` (shared by clones).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    x_weights_ : numpy.ndarray, shape (dx, n_components)
    y_weights_ : numpy.ndarray, shape (dy, n_components)
    correlations_ : numpy.ndarray, shape (n_components,)
        Canonical correlations of the noisy estimate.
    result_ : dpstats.decomposition.CCAResult
        The full result (noisy matrix, σ, floor).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.estimators import DPCCA
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(-1, 1, (2000, 1))
    >>> X = np.hstack([s, rng.uniform(-1, 1, (2000, 1))]) / 3
    >>> Y = np.hstack([s, rng.uniform(-1, 1, (2000, 1))]) / 3
    >>> xs, ys = DPCCA(1, random_state=0).fit(X, Y).transform(X, Y)
    """

    def __init__(
        self,
        n_components=1,
        *,
        epsilon=1.0,
        delta=DEFAULT_DELTA,
        calibration="analytic",
        ridge=None,
        clip=False,
        norm_bound=None,
        radius_share=RADIUS_SHARE,
        max_rows=None,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.ridge = ridge
        self.clip = clip
        self.norm_bound = norm_bound
        self.radius_share = radius_share
        self.max_rows = max_rows
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y, privacy_unit=None):
        """Fit the private canonical directions of the views X and y (``privacy_unit`` as in
        :meth:`DPPCA.fit`). Returns ``self``."""
        X, privacy_unit = _unit_input(X, privacy_unit)
        if y is None:
            raise DataValidationError("DPCCA requires y to be passed, but the target y is None (y is the second view)")
        if engine_of(X, y).LAZY:
            X, Y = _fit_input(self, X), as_array(y, "y", ndim=(1, 2))
        else:
            X = _fit_input(self, X)
            _numeric(y, "y")
            Y = _sklearn("y", check_array, y, dtype=np.float64, ensure_2d=False, input_name="y")
            if Y.shape[0] != X.shape[0]:
                raise DataValidationError(
                    f"X and y must have the same number of rows (the same people); got {X.shape[0]} and {Y.shape[0]}"
                )
        Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
        res = cca(
            X,
            Y,
            check_int(self.n_components, "n_components", high=min(X.shape[1], Y.shape[1])),
            self.epsilon,
            self.delta,
            calibration=self.calibration,
            ridge=self.ridge,
            clip=self.clip,
            norm_bound=self.norm_bound,
            radius_share=self.radius_share,
            rng=check_rng(self.random_state, "random_state"),
            accountant=self.accountant,
            **_unit_options(privacy_unit, self.max_rows),
        )
        self.x_weights_, self.y_weights_, self.correlations_, self.result_ = res.U, res.V, res.correlations, res
        self._n_features_out = self.x_weights_.shape[1]  # names "dpcca0", ... of the X scores
        return self

    def transform(self, X, y=None):
        """Canonical scores ``X @ x_weights_`` (and ``y @ y_weights_`` if y is given).

        ``fit_transform(X, y)`` returns the X scores only (scikit-learn's
        ``TransformerMixin`` behaviour, so that DPCCA composes in a Pipeline);
        call ``fit(X, y).transform(X, y)`` for both views.
        """
        check_is_fitted(self)
        X = _input(self, X)
        if y is None:
            return X @ self.x_weights_
        Y = (
            as_array(y, "y", ndim=(1, 2))
            if engine_of(y).LAZY
            else _sklearn("y", check_array, y, dtype=np.float64, ensure_2d=False, input_name="y")
        )
        Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
        if Y.shape != (X.shape[0], self.y_weights_.shape[0]):
            raise DataValidationError(
                f"y must have shape ({X.shape[0]}, {self.y_weights_.shape[0]}) (the rows of X, the "
                f"columns of the y seen in fit); got {Y.shape}"
            )
        return X @ self.x_weights_, Y @ self.y_weights_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


def _with_intercept_column(X: np.ndarray) -> np.ndarray:
    """[X, 1] / √2 in one allocation: rows keep ‖z‖₂ <= 1 when ‖x‖₂ <= 1, so the ERM calibration is unchanged."""
    Z = np.empty((X.shape[0], X.shape[1] + 1))
    np.multiply(X, 1.0 / math.sqrt(2.0), out=Z[:, :-1])
    Z[:, -1] = 1.0 / math.sqrt(2.0)
    return Z


def _check_classes(classes, owner: str) -> np.ndarray:
    """The two public class labels, sorted (``classes_``); never read from y."""
    if classes is None:
        raise ParameterError(
            f"{owner} needs classes=[negative, positive]: the two class labels are a public parameter, never read "
            "from y (which labels occur in y is private: a dataset whose labels are all one class, or use the "
            "values 0 and 2, must not be told apart from its neighbours)"
        )
    values = np.unique(np.asarray(classes))
    if values.ndim != 1 or values.size != 2:
        # "Only binary classification is supported." is the phrase scikit-learn's checks look for.
        raise ParameterError(
            f"Only binary classification is supported: classes must hold exactly two distinct labels; "
            f"got {classes!r}. For more classes, wrap the estimator in "
            "sklearn.multiclass.OneVsRestClassifier (each of the K fits spends epsilon)"
        )
    return values


class _DPLinearClassifier(_SharedAccountantMixin, ClassifierMixin, BaseEstimator):
    """Shared fit / predict of the two ERM classifiers; subclasses give the loss (``_loss``)."""

    def fit(self, X, y, privacy_unit=None):
        """Fit the private weights; ``y`` holds labels from the public ``classes`` (``privacy_unit`` as in
        :meth:`DPPCA.fit`). Returns ``self``."""
        X, privacy_unit = _unit_input(X, privacy_unit)
        check_flag(self.clip, "clip")
        check_flag(self.fit_intercept, "fit_intercept")
        _, units = take_units(X, privacy_unit, self.max_rows, "X")
        if engine_of(X, y).LAZY:
            return self._fit_lazy(X, y, units)
        if y is None:
            raise DataValidationError(
                f"{type(self).__name__} requires y to be passed, but the target y is None (y: the labels)"
            )
        X = _fit_input(self, X)
        y = _sklearn("y", check_array, y, ensure_2d=False, dtype=None, input_name="y")  # NaN, infinity
        y = _sklearn("y", column_or_1d, y, warn=True)
        if y.shape[0] != X.shape[0]:
            raise DataValidationError(f"X and y must have the same number of rows; got {X.shape[0]} and {y.shape[0]}")
        _sklearn("y", check_classification_targets, y)
        classes = _check_classes(self.classes, type(self).__name__)
        unknown = ~np.isin(y, classes)
        if unknown.any():
            # "Only binary classification is supported." is the phrase scikit-learn's checks look for.
            raise DataValidationError(
                f"Only binary classification is supported: y holds {int(unknown.sum())} label(s) that "
                f"are not in classes={classes.tolist()}; every label must be one of the two public "
                "classes (validated before anything is charged)"
            )
        X = check_row_norms(X, "X", clip=self.clip)
        labels = np.where(y == classes[1], 1.0, -1.0)
        Z = _with_intercept_column(X) if self.fit_intercept else X
        return self._fit_labels(Z, labels, classes, units)

    def _fit_lazy(self, X, y, units):
        """``fit`` on dask data: the labels are mapped to ±1 lazily (a label outside ``classes`` becomes NaN, and
        the one validation pass of ``linear_model._erm.fit_weights`` counts it), the intercept column added chunk by
        chunk."""
        X = check_row_norms(_fit_input(self, X), "X", clip=self.clip)
        classes = _check_classes(self.classes, type(self).__name__)
        engine = engine_of(X, y)
        labels = engine.signed_labels(y, classes)
        Z = engine.map_row_blocks(_with_intercept_column, X, X.shape[1] + 1) if self.fit_intercept else X
        return self._fit_labels(Z, labels, classes, units)

    def _fit_labels(self, Z, labels, classes, units):
        f = fit_weights(
            Z,
            labels,
            self.epsilon,
            self.lam,
            self._loss(),
            self.method,
            check_rng(self.random_state, "random_state"),
            self.accountant,
            self.tol,
            self.max_iter,
            self.noise,
            units,
        )
        self.classes_ = classes
        if self.fit_intercept:
            f = f / math.sqrt(2.0)
            self.coef_, self.intercept_ = f[None, :-1], f[-1:]
        else:
            self.coef_, self.intercept_ = f[None, :], np.zeros(1)
        return self

    def decision_function(self, X):
        """Signed score ``X @ coef_ + intercept_``; positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = _input(self, X)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """Predicted class labels (lazily for a dask X)."""
        positive = self.decision_function(X) > 0
        if engine_of(positive).LAZY:
            return np.where(positive, self.classes_[1], self.classes_[0])
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


_CLASSIFIER_NOTES = """
    Labels: ``classes`` names the two labels (public, never read from y);
    ``classes_`` is them sorted, and ``classes_[1]`` is mapped to +1. A label in
    y that is not in ``classes`` raises before anything is charged. No solver
    diagnostic (iterations, gradient norm) is exposed: it would be computed
    from the data without noise.

    Intercept: with ``fit_intercept=True`` each row x is mapped to
    z = [x, 1]/√2 — a fixed map, so ‖z‖ <= 1 whenever ‖x‖ <= 1 and the norm bound
    on X is unchanged — and the mechanism runs on z in d + 1 dimensions with the
    same ε (output perturbation's L2 sensitivity stays 2R/(nλ) plus twice the solver's public distance to the
    exact minimiser, in d + 1 dimensions).
    The intercept is regularised like the other weights, and the √2 shrinks the
    margins (equivalently, λ acts twice as strongly). ``coef_`` and
    ``intercept_`` are reported in the original x scale.
"""


class DPLogisticRegression(_DPLinearClassifier):
    """Differentially private logistic regression (CMS 2011; wraps :func:`dpstats.logistic_regression`).

    Every ``fit`` is one ε-DP release (δ = 0) under replace-one neighbours with
    rows ‖x_i‖₂ <= 1: objective perturbation (Algorithm 2, Theorem 9, c = 1/4)
    or output perturbation (Algorithm 1, Theorem 6).
    {notes}
    Parameters
    ----------
    classes : sequence of two labels
        The public class labels (required at ``fit``).
    epsilon : float, default 1.0
        ε of each fit.
    lam : float, default 0.01
        Regularisation λ of (1/n) Σ ℓ + (λ/2)‖f‖² (scikit-learn's C is 1/(nλ)).
    method : {{"objective", "output"}}, default "objective"
    fit_intercept : bool, default True
    clip : bool, default False
        Rescale rows with norm > 1 to norm 1 instead of raising.
    max_rows : int, optional
        With ``fit(..., privacy_unit=ids)``: the public number of rows kept per
        unit (see :func:`dpstats.mean`, "Privacy units"); required then.
    accountant : dpstats.Accountant, optional
        Charged at every ``fit`` (shared by clones).
    random_state : None, int or numpy.random.Generator
    tol : float, default 1e-9
        Objective perturbation: the public bound tol/(λ + Δ) on the released centre's distance to the exact
        minimiser (see :mod:`dpstats.linear_model._erm`).
    max_iter : int, default 5000
    noise : {{"exact", "gamma", "float"}}, default "exact"
        As in :func:`dpstats.svm` (``"gamma"``: the paper's output-perturbation noise, recorded as unproven).

    Attributes
    ----------
    coef_ : numpy.ndarray, shape (1, n_features_in_)
    intercept_ : numpy.ndarray, shape (1,)
    classes_ : numpy.ndarray, shape (2,)
        ``classes``, sorted.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.estimators import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, (2000, 2))
    >>> y = np.where(X[:, 0] > 0, "yes", "no")
    >>> clf = DPLogisticRegression(classes=["no", "yes"], epsilon=1.0, random_state=0).fit(X, y)
    >>> clf.classes_.tolist()
    ['no', 'yes']
    """

    def __init__(
        self,
        *,
        classes=None,
        epsilon=1.0,
        lam=0.01,
        method="objective",
        fit_intercept=True,
        clip=False,
        max_rows=None,
        accountant=None,
        random_state=None,
        tol=DEFAULT_TOL,
        max_iter=DEFAULT_MAX_ITER,
        noise="exact",
    ):
        self.classes = classes
        self.epsilon = epsilon
        self.lam = lam
        self.method = method
        self.fit_intercept = fit_intercept
        self.clip = clip
        self.max_rows = max_rows
        self.accountant = accountant
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.noise = noise

    def _loss(self):
        return LOGISTIC

    def predict_proba(self, X):
        """Class probabilities, columns in the order of ``classes_``."""
        p = expit(self.decision_function(X))
        return np.stack([1.0 - p, p], axis=1)


class DPLinearSVC(_DPLinearClassifier):
    """Differentially private linear SVM with the Huber loss (CMS 2011; wraps :func:`dpstats.svm`).

    Every ``fit`` is one ε-DP release (δ = 0) under replace-one neighbours with
    rows ‖x_i‖₂ <= 1: objective perturbation (Algorithm 2, Theorem 9 and
    Section 3.4.2, c = 1/(2h)) or output perturbation (Algorithm 1, Theorem 6).
    {notes}
    Parameters
    ----------
    classes : sequence of two labels
        The public class labels (required at ``fit``).
    epsilon : float, default 1.0
        ε of each fit.
    lam : float, default 0.01
        Regularisation λ.
    h : float, default 0.5
        Huber parameter.
    method : {{"objective", "output"}}, default "objective"
    fit_intercept : bool, default True
    clip : bool, default False
    accountant : dpstats.Accountant, optional
    random_state : None, int or numpy.random.Generator
    tol : float, default 1e-9
    max_iter : int, default 5000
    noise : {{"exact", "gamma", "float"}}, default "exact"
        As in :func:`dpstats.svm` (``"gamma"``: the paper's output-perturbation noise, recorded as unproven).

    Attributes
    ----------
    coef_ : numpy.ndarray, shape (1, n_features_in_)
    intercept_ : numpy.ndarray, shape (1,)
    classes_ : numpy.ndarray, shape (2,)
        ``classes``, sorted.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.estimators import DPLinearSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, (2000, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> DPLinearSVC(classes=[0, 1], epsilon=1.0, random_state=0).fit(X, y).predict(X[:3]).shape
    (3,)
    """

    def __init__(
        self,
        *,
        classes=None,
        epsilon=1.0,
        lam=0.01,
        h=0.5,
        method="objective",
        fit_intercept=True,
        clip=False,
        max_rows=None,
        accountant=None,
        random_state=None,
        tol=DEFAULT_TOL,
        max_iter=DEFAULT_MAX_ITER,
        noise="exact",
    ):
        self.classes = classes
        self.epsilon = epsilon
        self.lam = lam
        self.h = h
        self.method = method
        self.fit_intercept = fit_intercept
        self.clip = clip
        self.max_rows = max_rows
        self.accountant = accountant
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.noise = noise

    def _loss(self):
        return huber(self.h)


DPLogisticRegression.__doc__ = DPLogisticRegression.__doc__.format(notes=_CLASSIFIER_NOTES)
DPLinearSVC.__doc__ = DPLinearSVC.__doc__.format(notes=_CLASSIFIER_NOTES)


class DPLinearRegression(_SharedAccountantMixin, RegressorMixin, BaseEstimator):
    """Differentially private linear regression (wraps :func:`dpstats.linear_regression`).

    Every ``fit`` is one release of the chosen method, charged once: AdaSSP (the default; Wang 2018, Algorithm 2),
    SSP, TukeyEM (Amin et al. 2023: no bounds needed; its sampler is floating point, so its guarantee is recorded
    as unproven) or DPTheilSen (one feature; Alabi et al. 2022). See :func:`dpstats.linear_regression` and the
    method modules for the neighbouring relation, sensitivities and calibration.

    Parameters
    ----------
    epsilon : float, default 1.0
        ε of each fit (private bounds included).
    delta : float, optional
        δ of each fit; None is the method's default (1e-6, or 0 for ``"theil_sen"``).
    method : {"adassp", "ssp", "tukey", "theil_sen"}, default "adassp"
    bounds_X : pair, list of pairs, dict or "private"
        Public bounds of the columns of X (a dict by column name for a DataFrame); not for ``"tukey"``.
    bounds_y : pair or "private"
        Public bounds of y; not for ``"tukey"``.
    fit_intercept : bool, default True
    clip : bool, default False
        Clip values outside the bounds instead of raising.
    max_rows : int, optional
        With ``fit(..., privacy_unit=ids)``: the public number of rows kept per unit.
    accountant : dpstats.Accountant, optional
        Charged at every ``fit`` (shared by clones).
    random_state : None, int or numpy.random.Generator
    ci_level : float, optional
        A confidence level (e.g. 0.95) for the coefficients (``"ssp"`` and ``"adassp"``, public bounds, no privacy
        unit): each fit is then ``dps.linear_regression(..., ci=ci_level)`` — the same release and budget — and sets
        ``coef_ci_``, ``intercept_ci_``, ``coef_pvalue_`` and ``f_pvalue_`` (intervals and tests for the
        population coefficients, sampling and noise together: :mod:`dpstats.inference._regression`). None: no
        interval.

    Attributes
    ----------
    coef_ : numpy.ndarray, shape (n_features_in_,)
    intercept_ : float
    result_ : dpstats.linear_model.LinearRegressionResult
    coef_ci_ : numpy.ndarray, shape (n_features_in_, 2)
        With ``ci_level``: each coefficient's interval (low, high).
    intercept_ci_ : numpy.ndarray, shape (2,)
        With ``ci_level``: the intercept's interval ((0, 0) with ``fit_intercept=False``: the intercept is 0).
    coef_pvalue_ : numpy.ndarray, shape (n_features_in_,)
        With ``ci_level``: the two-sided p-values of H0: coefficient = 0.
    f_pvalue_ : float
        With ``ci_level``: the p-value of the F test of H0: every coefficient is 0 (the intercept free).
    estimate_ : dpstats.Estimate
        With ``ci_level``: the whole result (``.std_error``, ``.method``, ``.target``).
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray, for a DataFrame X

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.estimators import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (5000, 2))
    >>> y = X @ [2.0, -1.0] + rng.normal(0, 0.1, 5000)
    >>> model = DPLinearRegression(bounds_X=(0, 1), bounds_y=(-2, 3), random_state=0).fit(X, y)
    >>> model.predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        method="adassp",
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        clip=False,
        max_rows=None,
        accountant=None,
        random_state=None,
        ci_level=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.clip = clip
        self.max_rows = max_rows
        self.accountant = accountant
        self.random_state = random_state
        self.ci_level = ci_level

    def fit(self, X, y, privacy_unit=None):
        """Fit the private model (``privacy_unit`` as in :meth:`DPPCA.fit`). Returns ``self``."""
        level = check_level(self.ci_level, "ci_level")
        X, privacy_unit = _unit_input(X, privacy_unit)
        names = getattr(X, "columns", None) if is_frame(X) else None
        if engine_of(X, y).LAZY:
            X = _fit_input(self, X)
        else:
            X = _fit_input(self, X)
            if y is None:
                raise DataValidationError("DPLinearRegression requires y to be passed, but the target y is None")
            _numeric(y, "y")
            y = _sklearn("y", check_array, y, ensure_2d=False, dtype=np.float64, input_name="y")
            y = _sklearn("y", column_or_1d, y, warn=True)
        bounds_X = self.bounds_X
        if isinstance(bounds_X, dict) and names is not None:  # as linear_regression reads a dict: every column, exactly
            missing = [c for c in names if c not in bounds_X and str(c) not in bounds_X]
            unknown = [c for c in bounds_X if str(c) not in {str(n) for n in names}]
            if missing or unknown:
                raise ParameterError(
                    f"bounds_X must name every column of X exactly; missing {missing}, unknown {unknown} (the columns "
                    f"are {[str(c) for c in names]})"
                )
            bounds_X = [bounds_X[c] if c in bounds_X else bounds_X[str(c)] for c in names]
        result = linear_regression(
            X,
            y,
            self.epsilon,
            self.delta,
            method=self.method,
            bounds_X=bounds_X,
            bounds_y=self.bounds_y,
            fit_intercept=self.fit_intercept,
            clip=self.clip,
            rng=check_rng(self.random_state, "random_state"),
            accountant=self.accountant,
            **_unit_options(privacy_unit, self.max_rows),
            **({} if level is None else {"ci": level}),
        )
        if level is not None:
            estimate, result = result, result.estimate
            interval = np.asarray(estimate.ci, dtype=np.float64)
            d = result.coef.size
            self.estimate_ = estimate
            self.coef_ci_ = interval[:d]
            self.intercept_ci_ = interval[d] if interval.shape[0] > d else np.zeros(2)
            self.coef_pvalue_ = np.asarray(estimate.pvalue, dtype=np.float64)[:d]
            self.f_pvalue_ = estimate.f_pvalue
        self.coef_, self.intercept_, self.result_ = result.coef, result.intercept, result
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_`` (lazily for a dask X)."""
        check_is_fitted(self)
        X = _input(self, X)
        return X @ self.coef_ + self.intercept_
