/** changeflow jobs. */
package dev.changeflow.jobs;
