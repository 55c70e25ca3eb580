/** A status condition as the Kubernetes API conventions define it (metav1.Condition). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export const ConditionType = {
  /** CouchDB answers: the StatefulSet has a ready replica. */
  Ready: 'Ready',
  /** Scaled up (or coming up). False while hibernated, which is a normal state, not a failure. */
  Active: 'Active',
  /** The instance is moving towards its desired state (starting, waking, hibernating). */
  Progressing: 'Progressing',
  /** Something needs a person: an invalid spec, or objects the operator could not write. */
  Degraded: 'Degraded',
  /** The last measurement of status.usage succeeded; False keeps the last usage and says why. */
  UsageMeasured: 'UsageMeasured',
  /** With the backups add-on: the newest backup is good and recent (docs/backups.md). */
  BackedUp: 'BackedUp',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export const ConditionReason = {
  Pending: 'Pending',
  Starting: 'Starting',
  Running: 'Running',
  Hibernating: 'Hibernating',
  Hibernated: 'Hibernated',
  Waking: 'Waking',
  Restoring: 'Restoring',
  RestoreFailed: 'RestoreFailed',
  RestoreRetrying: 'RestoreRetrying',
  KeepAlive: 'KeepAlive',
  RecentActivity: 'RecentActivity',
  ReplicationRunning: 'ReplicationRunning',
  FinalBackup: 'FinalBackup',
  BackupCompleted: 'BackupCompleted',
  BackupFailed: 'BackupFailed',
  BackupOverdue: 'BackupOverdue',
  NoBackupYet: 'NoBackupYet',
  WakeRequested: 'WakeRequested',
  InvalidSpec: 'InvalidSpec',
  InstanceLimitExceeded: 'InstanceLimitExceeded',
  ReconcileFailed: 'ReconcileFailed',
  /** The scheduler finds no node for the pod (region pinning, resources); its message says why. */
  Unschedulable: 'Unschedulable',
  /**
   * Trying to start for longer than the operator's start deadline without answering (an
   * unschedulable or crash-looping pod), as a Deployment's ProgressDeadlineExceeded; the message
   * says why. The instance stays up.
   */
  StartDeadlineExceeded: 'StartDeadlineExceeded',
  AsExpected: 'AsExpected',
  Measured: 'Measured',
  MeasurementFailed: 'MeasurementFailed',
} as const;
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];

/** Reasons of the Kubernetes Events the CouchInstance controller records. */
export const CouchInstanceEventReason = {
  CredentialsCreated: 'CredentialsCreated',
  Started: 'Started',
  Hibernated: 'Hibernated',
  Woken: 'Woken',
  VolumeExpansionRequested: 'VolumeExpansionRequested',
  VolumeExpansionRefused: 'VolumeExpansionRefused',
  InvalidSpec: 'InvalidSpec',
  InstanceLimitExceeded: 'InstanceLimitExceeded',
  ReconcileFailed: 'ReconcileFailed',
  RestoreCompleted: 'RestoreCompleted',
  RestoreRetrying: 'RestoreRetrying',
  RestoreFailed: 'RestoreFailed',
  Unschedulable: 'Unschedulable',
  StartDeadlineExceeded: 'StartDeadlineExceeded',
} as const;
export type CouchInstanceEventReason =
  (typeof CouchInstanceEventReason)[keyof typeof CouchInstanceEventReason];
