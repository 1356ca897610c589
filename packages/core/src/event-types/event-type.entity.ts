import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'event_types' })
export class EventTypeEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'team_id' }) teamId!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text' }) description!: string;
  /** The example exactly as the operator wrote it (JSON text), or null. */
  @Column({ type: 'text', nullable: true }) example!: string | null;
  @Column({ type: 'boolean' }) archived!: boolean;
  @Column({ type: 'bigint' }) version!: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
}
