"""The compendium: what serves the notebooks and the reports, on top of the library.

* :mod:`~dpstats.compendium.datasets` — real-data loaders (with :mod:`~dpstats.compendium.download`), the papers'
  synthetic generators and their (not private) preprocessing;
* :mod:`~dpstats.compendium.experiments` — sweeps over seeds, error bars, figures and tables;
* :mod:`~dpstats.compendium.comparison` — published vs reproduced, with one verdict rule;
* :mod:`~dpstats.compendium.reports` — the report: every notebook of the manifest run by
  :mod:`~dpstats.compendium.runner` (papermill), and its index;
* :mod:`~dpstats.compendium.cli` — the ``dpstats`` command line.

The library (everything in :mod:`dpstats` outside this package) never imports it: ``import dpstats`` needs neither
matplotlib nor the notebook stack, which come with the ``notebooks`` extra.
"""
