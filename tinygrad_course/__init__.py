"""tinygrad_course: the course built on the ``tinygrad_edu`` library.

Built and installed from the same repository as the library (one ``pip install``), and kept
apart from it so that the layout shows which is which: ``tinygrad_edu`` is the library and
never imports this package; the course imports the library.

* :mod:`tinygrad_course.lessons`: the lessons' exercise checks and the student edition
  (``tinygrad-edu make-student``);
* :mod:`tinygrad_course.grading`: the autograder kit (points per task, Gradescope zip,
  sandboxes, ``tinygrad-edu grade`` and ``grade-batch``); its pytest plugin
  (:mod:`tinygrad_course.grading.pytest_plugin`) is loaded only where grading happens, never
  by being installed;
* :mod:`tinygrad_course.demo`: ``tinygrad-edu demo``;
* :mod:`tinygrad_course.cli`: the ``tinygrad-edu`` console script, the library's command line
  with the course's commands registered.
"""
