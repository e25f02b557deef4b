"""Workloads: the job table, SWF reading/writing, cleaning, and generators."""
from .cleaning import Cleaning, CleaningReport, clean
from .jobs import SWF_FIELDS, JobTable, SwfHeader
from .swf import SwfReader, read_swf, write_swf

__all__ = ["Cleaning", "CleaningReport", "clean", "SWF_FIELDS", "JobTable", "SwfHeader", "SwfReader",
           "read_swf", "write_swf"]
